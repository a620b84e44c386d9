// Takes a screenshot of one page of the viewer in Debian's headless Chromium, as a person would see it at
// the given window size, and measures its lineage drawing: tests/view.rs runs it (screenshots for docs/,
// and "a wide graph scrolls, nothing is cut off"); nothing here decides what is right, the test does.
//
// usage: node shot.mjs URL OUT.png WIDTH HEIGHT
// prints one JSON object: for the first lineage drawing, its drawn size and the size it asks for, and its
// frame's visible width, scroll width and overflow.
import { chromium } from 'playwright-core';

const [url, out, width, height] = process.argv.slice(2);
if (!url || !out) {
    console.error('usage: node shot.mjs URL OUT.png WIDTH HEIGHT');
    process.exit(2);
}
const browser = await chromium.launch({
    executablePath: process.env.CHROMIUM || '/usr/bin/chromium',
    args: ['--no-sandbox', '--disable-gpu', '--no-first-run', '--disable-background-networking',
        '--disable-component-update', '--disable-sync'],
});
try {
    const page = await browser.newPage({ viewport: { width: Number(width || 1400), height: Number(height || 1000) } });
    await page.goto(url);
    const svg = page.locator('svg.lineage').first();
    let drawing = null;
    if (await svg.count()) {
        drawing = await svg.evaluate((s) => {
            const frame = s.closest('.scroll');
            const box = s.getBoundingClientRect();
            return {
                drawn: [box.width, box.height],
                asked: [Number(s.getAttribute('width')), Number(s.getAttribute('height'))],
                frame: frame && {
                    visible: frame.clientWidth,
                    scroll: frame.scrollWidth,
                    overflow: getComputedStyle(frame).overflowX,
                },
            };
        });
    }
    await page.screenshot({ path: out });
    console.log(JSON.stringify({ drawing }));
} finally {
    await browser.close();
}
