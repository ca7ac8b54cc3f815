/**
 * The helpdesk card as an agent sees it, without Dixa: the shipped template rendered by a Liquid engine, then shown
 * in a sandboxed iframe of the sidebar's width in Debian's chromium.
 *
 *   const html = await renderCardTemplate(answer);                       // answer: the route's JSON answer
 *   const { text } = await screenshotCard(html, 'docs/screenshots/x.png'); // what the agent reads
 *
 * Dixa renders the template with Liqp (Java); liquidjs stands in for it here, strict about filters so that a filter
 * Liqp would not know either fails the test instead of printing nothing.
 */
import fs from 'node:fs/promises';
import http from 'node:http';
import type { AddressInfo } from 'node:net';
import path from 'node:path';
import { Liquid } from 'liquidjs';
import { openBrowser } from '../woocommerce/support/admin-browser';
import { readCardTemplate } from '../../src/helpdesk-card/card-template';

/** Width of the card's iframe in Dixa's conversation sidebar, in CSS pixels. */
export const CARD_WIDTH = 360;

const engine = new Liquid({ strictFilters: true });

/**
 * The shipped template rendered with `answer` bound as the template expects Dixa to hand it over: under the one
 * top-level variable `card`, as `card.data` (see the template's opening comment for what could not be confirmed).
 */
export async function renderCardTemplate(answer: unknown): Promise<string> {
  return engine.parseAndRender(readCardTemplate(), { card: { data: answer } });
}

/** `text` as the value of an HTML attribute in double quotes. */
const attribute = (text: string) => text.replace(/&/g, '&amp;').replace(/"/g, '&quot;');

/** A page like Dixa's sidebar around the card: the rendered card in a sandboxed iframe, as `srcdoc`. */
function hostPage(html: string): string {
  return `<!DOCTYPE html>
<html><head><meta charset="utf-8"><title>helpdesk card</title>
<style>body { margin: 0; padding: 16px; background: #f4f5f7; } iframe { display: block; width: ${CARD_WIDTH}px; height: 600px; border: 0; background: #fff; }</style>
</head><body>
<iframe id="card" sandbox="allow-popups allow-popups-to-escape-sandbox" srcdoc="${attribute(html)}"></iframe>
</body></html>`;
}

/**
 * Serves a host page with the card in its iframe over a loopback HTTP server, opens it in headless chromium, fits
 * the iframe's height to the card, saves a PNG of the iframe to `file` and resolves with the card's visible text.
 */
export async function screenshotCard(html: string, file: string): Promise<{ text: string }> {
  const page = hostPage(html);
  const server = http.createServer((_req, res) => {
    res.writeHead(200, { 'content-type': 'text/html; charset=utf-8', 'cache-control': 'no-store' });
    res.end(page);
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  const { port } = server.address() as AddressInfo;
  const browser = await openBrowser();
  try {
    // Twice the pixels of a plain screen, as a laptop's: the screenshots are read in the documentation.
    const context = await browser.browser.newContext({ viewport: { width: CARD_WIDTH + 32, height: 800 }, deviceScaleFactor: 2 });
    const tab = await context.newPage();
    await tab.goto(`http://127.0.0.1:${port}/`, { waitUntil: 'load' });
    const frame = tab.frameLocator('#card');
    const body = frame.locator('body');
    await body.waitFor();
    // The sidebar gives the card the height it needs: measured inside the frame, set from the host page.
    const height = await frame.locator('html').evaluate((root) => Math.ceil(root.getBoundingClientRect().height));
    await tab.locator('#card').evaluate((iframe, h) => { (iframe as HTMLIFrameElement).style.height = `${h}px`; }, height);
    await fs.mkdir(path.dirname(file), { recursive: true });
    await tab.locator('#card').screenshot({ path: file });
    return { text: await body.innerText() };
  } finally {
    await browser.close();
    await new Promise<void>((resolve) => server.close(() => resolve()));
  }
}
