// Opens a page of the review queue in Debian's headless Chromium and clicks buttons by their exact text,
// as a person would: each click submits a form, and the page it leads to is reported. tests/queue.rs runs
// it; nothing here decides what is right, the test does.
//
// usage: node click.mjs URL [BUTTON-TEXT…]
// prints one JSON object: the first page and, per click, the page the browser ended on (url, status, html,
// and the milliseconds from the click to that page's load), plus every request the browser made.
import { chromium } from 'playwright-core';

const [url, ...buttons] = process.argv.slice(2);
if (!url) {
    console.error('usage: node click.mjs URL [BUTTON-TEXT…]');
    process.exit(2);
}
const browser = await chromium.launch({
    executablePath: process.env.CHROMIUM || '/usr/bin/chromium',
    args: ['--no-sandbox', '--disable-gpu', '--no-first-run', '--disable-background-networking',
        '--disable-component-update', '--disable-sync'],
});
try {
    const page = await browser.newPage();
    const requests = [];
    page.on('request', (r) => requests.push({ method: r.method(), url: r.url() }));
    const first = await page.goto(url);
    const pages = [{ url: page.url(), status: first.status(), html: await page.content() }];
    for (const name of buttons) {
        const button = page.getByRole('button', { name, exact: true });
        const started = performance.now();
        const [response] = await Promise.all([
            page.waitForNavigation({ waitUntil: 'load' }),
            button.click(),
        ]);
        const ms = performance.now() - started;
        pages.push({ clicked: name, ms, url: page.url(), status: response.status(), html: await page.content() });
    }
    console.log(JSON.stringify({ pages, requests }));
} finally {
    await browser.close();
}
