import http from 'node:http';
import type { AddressInfo } from 'node:net';

export interface RecordedRequest {
  method: string;
  path: string;
  headers: http.IncomingHttpHeaders;
  body: string;
  json: unknown;
}

/** A request the network holds up (FakeProviderServer.stallRequests). */
export interface StalledRequest {
  method: string;
  path: string;
  /** `before`: not at the provider yet; `after`: acted on, its answer on its way. */
  when: 'before' | 'after';
  letThrough(): void;
  drop(): void;
}

/** One answer of a fake provider: a JSON body (or none), optionally late. */
export interface ProviderAnswer {
  status: number;
  body: Record<string, unknown> | unknown[] | null;
  delayMs?: number;
  /** Extra response headers (e.g. Retry-After on a 429). */
  headers?: Record<string, string>;
}

/**
 * What both loopback fake providers share: a real node:http server on 127.0.0.1, every request
 * recorded, and an optional delay for the next answer. Subclasses only route.
 */
export abstract class FakeProviderServer {
  readonly requests: RecordedRequest[] = [];
  url = '';
  private nextDelayMs = 0;
  /** Added to every answer (a provider's latency). */
  latencyMs = 0;
  /** Calls answered at once by the provider's own limits (enforceLimits) and the most seen in flight. */
  rateLimited = 0;
  maxInFlight = 0;
  private inFlight = 0;
  private limits: { concurrent: number; perSecond: number; startedAt: number[] } | null = null;
  private held: { matches: (path: string) => boolean; waiting: Set<() => void> } | null = null;
  private lost: { matches: (method: string, path: string) => boolean; count: number }[] = [];
  private stalls: { matches: (method: string, path: string) => boolean; when: 'before' | 'after'; count: number }[] = [];
  private readonly stalled = new Set<StalledRequest>();
  private server: http.Server | null = null;

  protected abstract route(req: http.IncomingMessage, pathname: string, json: unknown, rawBody: string): ProviderAnswer;

  /** The Content-Type of a JSON answer with this status. */
  protected contentType(_status: number): string {
    return 'application/json';
  }

  async start(): Promise<{ url: string }> {
    const server = http.createServer((req, res) => void this.handle(req, res));
    this.server = server;
    await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
    this.url = `http://127.0.0.1:${(server.address() as AddressInfo).port}`;
    return { url: this.url };
  }

  async stop(): Promise<void> {
    const server = this.server;
    this.server = null;
    if (!server) return;
    server.closeAllConnections(); // slow answers must not hold the test run open
    await new Promise<void>((resolve) => server.close(() => resolve()));
  }

  /** Requests whose path matches get no answer until `releaseHeld` (or until the client gives up on them). */
  holdRequests(matches: (path: string) => boolean): void {
    this.held = { matches, waiting: new Set() };
  }

  /** Held requests still waiting for their answer with the client still connected. */
  get heldInFlight(): number {
    return this.held?.waiting.size ?? 0;
  }

  /**
   * The next `count` requests that `matches` are carried out as usual, and then their connection is cut before any
   * answer: the provider acted, and the caller hears a reset (a network fault, not a rule of the provider's).
   */
  loseAnswers(matches: (method: string, path: string) => boolean, count = 1): void {
    this.lost.push({ matches, count });
  }

  /** Faults set up and not yet met: no answer is lost any more. */
  clearLostAnswers(): void {
    this.lost = [];
  }

  /**
   * The network between the caller and the provider, made slow for the next `count` requests that `matches`: with
   * `before`, the request has not reached the provider yet (it acts on it only once let through, whether or not the
   * caller still waits: a late arrival); with `after`, the provider acted on it at once and its answer is on its way.
   * Each such request waits until `letThroughStalled` or `dropStalled`. The provider's rules are the same; only when
   * the request arrives, or when its answer does, changes. A caller that gives up meanwhile lets its request through.
   */
  stallRequests(matches: (method: string, path: string) => boolean, when: 'before' | 'after', count = 1): void {
    this.stalls.push({ matches, when, count });
  }

  /** Requests stalled so far, let through or not (see stallRequests). */
  stallsMet = 0;

  /** Requests stalled now (see stallRequests), oldest first. */
  get stalledRequests(): readonly StalledRequest[] {
    return [...this.stalled];
  }

  /** Stalls set up and not yet met are dropped. */
  clearStalls(): void {
    this.stalls = [];
  }

  /** Lets the stalled request (all of them without one) go on: it reaches the provider, or its answer reaches the caller. */
  letThroughStalled(which?: StalledRequest): void {
    for (const stalled of which ? [which] : [...this.stalled]) stalled.letThrough();
  }

  /**
   * The stalled request (all of them without one) is lost with its connection: one stalled before never reaches the
   * provider, one stalled after was acted on and its answer never arrives. The caller hears a reset.
   */
  dropStalled(which?: StalledRequest): void {
    for (const stalled of which ? [which] : [...this.stalled]) stalled.drop();
  }

  /** Answers every held request and stops holding. */
  releaseHeld(): void {
    const held = this.held;
    this.held = null;
    for (const release of held?.waiting ?? []) release();
  }

  /**
   * Answers 429, as the provider documents, to a call that finds `concurrent` calls in flight already
   * or more than `perSecond` started in the last second (counted over all methods).
   */
  enforceLimits(concurrent: number, perSecond: number): void {
    this.limits = { concurrent, perSecond, startedAt: [] };
  }

  /** The body of a 429 answer for a limit of this kind. */
  protected rateLimitedAnswer(_limit: 'concurrent' | 'rate'): ProviderAnswer {
    return { status: 429, body: null };
  }

  /** Delay the next answer of any route (to provoke client timeouts). */
  slowNextResponse(delayMs: number): void {
    this.nextDelayMs = delayMs;
  }

  requestsTo(method: string, pathPrefix: string): RecordedRequest[] {
    return this.requests.filter((request) => request.method === method && request.path.startsWith(pathPrefix));
  }

  private async handle(req: http.IncomingMessage, res: http.ServerResponse): Promise<void> {
    const chunks: Buffer[] = [];
    for await (const chunk of req) chunks.push(chunk as Buffer);
    const body = Buffer.concat(chunks).toString('utf8');
    let json: unknown = null;
    try {
      json = body === '' ? null : JSON.parse(body);
    } catch {
      json = null;
    }
    const path = req.url ?? '/';
    this.requests.push({ method: req.method ?? '', path, headers: req.headers, body, json });
    const held = this.held;
    if (held?.matches(path)) {
      await new Promise<void>((resolve) => {
        const done = () => {
          held.waiting.delete(done);
          resolve();
        };
        held.waiting.add(done);
        res.once('close', done);
      });
    }
    const method = req.method ?? '';
    const stallBefore = this.takeStall(method, path, 'before');
    if (stallBefore && await this.stall(res, method, path, 'before') === 'dropped') {
      req.socket.destroy();
      return;
    }
    const stallAfter = this.takeStall(method, path, 'after');
    const limited = this.overLimit();
    const answer = limited ? this.rateLimitedAnswer(limited) : this.route(req, new URL(path, 'http://fake').pathname, json, body);
    if (limited) this.rateLimited += 1;
    const lose = limited ? undefined : this.lost.find((rule) => rule.count > 0 && rule.matches(req.method ?? '', path));
    if (lose) {
      lose.count -= 1;
      this.lost = this.lost.filter((rule) => rule.count > 0);
      req.socket.destroy();
      return;
    }
    if (stallAfter && await this.stall(res, method, path, 'after') === 'dropped') {
      req.socket.destroy();
      return;
    }
    this.inFlight += 1;
    this.maxInFlight = Math.max(this.maxInFlight, this.inFlight);
    try {
      await this.answer(res, answer);
    } finally {
      this.inFlight -= 1;
    }
  }

  /** Whether a stall set up for `when` meets this request (and is used up by it). */
  private takeStall(method: string, path: string, when: 'before' | 'after'): boolean {
    const rule = this.stalls.find((stall) => stall.when === when && stall.count > 0 && stall.matches(method, path));
    if (!rule) return false;
    rule.count -= 1;
    this.stalls = this.stalls.filter((stall) => stall.count > 0);
    return true;
  }

  private stall(res: http.ServerResponse, method: string, path: string, when: 'before' | 'after'): Promise<'through' | 'dropped'> {
    return new Promise((resolve) => {
      const stalled: StalledRequest = {
        method, path, when,
        letThrough: () => { if (this.stalled.delete(stalled)) resolve('through'); },
        drop: () => { if (this.stalled.delete(stalled)) resolve('dropped'); },
      };
      this.stalled.add(stalled);
      this.stallsMet += 1;
      // A caller that gives up closes its connection: a request still on its way reaches the provider then (the bytes
      // were sent), and an answer on its way has nobody to reach.
      res.once('close', () => stalled.letThrough());
    });
  }

  private overLimit(): 'concurrent' | 'rate' | undefined {
    const limits = this.limits;
    if (!limits) return undefined;
    const now = Date.now();
    limits.startedAt = limits.startedAt.filter((at) => now - at < 1000);
    if (this.inFlight >= limits.concurrent) return 'concurrent';
    if (limits.startedAt.length >= limits.perSecond) return 'rate';
    limits.startedAt.push(now);
    return undefined;
  }

  private async answer(res: http.ServerResponse, answer: ProviderAnswer): Promise<void> {
    const delayMs = this.latencyMs + this.nextDelayMs + (answer.delayMs ?? 0);
    this.nextDelayMs = 0;
    if (delayMs > 0) await new Promise((resolve) => setTimeout(resolve, delayMs));
    if (res.destroyed) return;
    if (answer.body === null) {
      res.writeHead(answer.status, answer.headers ?? {});
      res.end();
      return;
    }
    res.writeHead(answer.status, { 'Content-Type': this.contentType(answer.status), ...answer.headers });
    res.end(JSON.stringify(answer.body));
  }
}
