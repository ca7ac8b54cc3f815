/**
 * A real browser for WP admin tests: Debian's chromium (apt package `chromium`, test/woocommerce/run.sh installs
 * it) driven headless by playwright-core, which brings no browser of its own.
 *
 *   const browser = await openBrowser();
 *   const page = await browser.newPage();          // a context of its own: its own cookies
 *   await logIn(page, origin.url, 'manager', 'secret');
 *   await page.goto(`${origin.url}/wp-admin/...`);
 *   await screenshot(page, 'subscription-edit');   // test-artifacts/screens/subscription-edit.png
 *   await browser.close();
 *
 * The test shops' origins have self-signed certificates (support/admin-origin.ts): the browser accepts them.
 */
import fs from 'node:fs/promises';
import path from 'node:path';
import { chromium, type Browser, type BrowserContext, type Page } from 'playwright-core';

export type { Page } from 'playwright-core';

const REPO = path.resolve(__dirname, '../../../..');

/** Where screenshot() saves its PNGs (git-ignored). */
export const SCREENS_DIR = path.join(REPO, 'test-artifacts', 'screens');

export const CHROMIUM = process.env.SIDECAR_CHROMIUM ?? '/usr/bin/chromium';

/** Time for one page load or action: generous, a loaded CI machine renders WP admin slowly. */
const ACTION_TIMEOUT_MS = 90_000;

export interface AdminBrowser {
  browser: Browser;
  /**
   * A page in a new browser context (cookies of its own, certificate errors ignored); `timezoneId` sets the
   * browser's own time zone (default: the machine's).
   */
  newPage(options?: { timezoneId?: string }): Promise<Page>;
  close(): Promise<void>;
}

/**
 * Launches chromium headless. Playwright gives each launch a fresh, temporary profile (user data dir) and
 * removes it on close.
 */
export async function openBrowser(): Promise<AdminBrowser> {
  const browser = await chromium.launch({
    executablePath: CHROMIUM,
    headless: true,
    timeout: ACTION_TIMEOUT_MS,
    args: [
      '--no-sandbox', '--disable-gpu', '--disable-quic', '--no-first-run', '--disable-background-networking',
      '--disable-component-update', '--disable-sync', '--ignore-certificate-errors',
    ],
  });
  const contexts: BrowserContext[] = [];
  return {
    browser,
    async newPage(options = {}) {
      const context = await browser.newContext({ ignoreHTTPSErrors: true, viewport: { width: 1280, height: 900 }, ...options });
      context.setDefaultTimeout(ACTION_TIMEOUT_MS);
      context.setDefaultNavigationTimeout(ACTION_TIMEOUT_MS);
      contexts.push(context);
      return context.newPage();
    },
    async close() {
      await Promise.allSettled(contexts.map((context) => context.close()));
      await browser.close();
    },
  };
}

/**
 * Logs in at `${origin}/wp-login.php` as WordPress' login form does and waits for the page it leads to (WP admin
 * for staff; WooCommerce sends a customer to My Account). Throws with WordPress' message when it refuses.
 * Resolves with the address the login ended on.
 */
export async function logIn(page: Page, origin: string, user: string, password: string): Promise<string> {
  await page.goto(`${origin}/wp-login.php`);
  await page.fill('#user_login', user);
  await page.fill('#user_pass', password);
  await Promise.all([
    page.waitForURL((url) => !url.pathname.endsWith('/wp-login.php'), { waitUntil: 'load' }).catch(async (error: Error) => {
      const refusal = await page.locator('#login_error').textContent({ timeout: 1000 }).catch(() => null);
      throw new Error(refusal ? `WordPress refused the login of ${user}: ${refusal.trim()}` : `login of ${user} did not leave wp-login.php: ${error.message}`);
    }),
    page.click('#wp-submit'),
  ]);
  return page.url();
}

/** Saves a full-page PNG as test-artifacts/screens/<name>.png; resolves with its path. */
export async function screenshot(page: Page, name: string): Promise<string> {
  await fs.mkdir(SCREENS_DIR, { recursive: true });
  const file = path.join(SCREENS_DIR, `${name.replace(/[^A-Za-z0-9._-]+/g, '-')}.png`);
  await page.screenshot({ path: file, fullPage: true });
  return file;
}

/** The answer to a request made from inside the page (its cookies, its origin). */
export interface PageResponse {
  status: number;
  body: unknown;
  /**
   * How the request was made: `wp.apiFetch` when the page has it, else `fetch` with the page's `wpApiSettings.nonce`
   * or with a nonce from `admin-ajax.php?action=rest-nonce`.
   */
  via: 'wp.apiFetch' | 'fetch with wpApiSettings.nonce' | 'fetch with rest-nonce';
}

/**
 * `GET`s `/wp-json${route}` from inside the page as a WP admin panel does: with `wp.apiFetch` (its nonce
 * middleware) when the page loads it, otherwise with `fetch`, the logged-in cookie and a `wp_rest` nonce from the
 * page (`wpApiSettings.nonce`) or from WordPress' `admin-ajax.php?action=rest-nonce`.
 */
export async function apiGetFromPage(page: Page, route: string): Promise<PageResponse> {
  return page.evaluate(async (routePath) => {
    const w = window as unknown as {
      wp?: { apiFetch?: (o: { url: string; parse?: boolean }) => Promise<Response> };
      wpApiSettings?: { nonce?: string };
    };
    const read = async (response: Response) => {
      const text = await response.text();
      try {
        return JSON.parse(text) as unknown;
      } catch {
        return text;
      }
    };
    if (w.wp?.apiFetch) {
      // An explicit url, as the panels give (with `path` apiFetch would prefix the REST root, `?rest_route=` on a
      // site without pretty permalinks). parse: false: the Response itself, thrown for a status other than 2xx.
      const response = await w.wp.apiFetch({ url: `/wp-json${routePath}`, parse: false }).catch((error: unknown) => {
        if (error instanceof Response) return error;
        throw error;
      });
      return { status: response.status, body: await read(response), via: 'wp.apiFetch' as const };
    }
    let nonce = w.wpApiSettings?.nonce;
    const via = nonce ? 'fetch with wpApiSettings.nonce' as const : 'fetch with rest-nonce' as const;
    if (!nonce) {
      const answer = await fetch('/wp-admin/admin-ajax.php?action=rest-nonce', { credentials: 'same-origin' });
      nonce = (await answer.text()).trim();
    }
    const response = await fetch(`/wp-json${routePath}`, { credentials: 'same-origin', headers: { 'X-WP-Nonce': nonce } });
    return { status: response.status, body: await read(response), via };
  }, route);
}

/** What a panel says in words: its visible text without the <code> details (the codes staff need not read). */
export async function wordsOf(page: Page, selector: string): Promise<string> {
  return page.locator(selector).first().evaluate((node) => {
    const copy = node.cloneNode(true) as HTMLElement;
    copy.querySelectorAll('code, .screen-reader-text').forEach((detail) => detail.remove());
    // innerText needs the copy laid out.
    copy.style.position = 'absolute';
    document.body.append(copy);
    const text = copy.innerText;
    copy.remove();
    return text.replace(/\s+/g, ' ').trim();
  });
}
