declare module 'autocannon' {
  namespace autocannon {
    interface Histogram { average: number; mean: number; p50: number; p90: number; p99: number; max: number; }
    interface Result { requests: Histogram & { total: number }; latency: Histogram; errors: number; non2xx: number; timeouts: number; '2xx': number; '4xx': number; '5xx': number; }
    interface RequestSpec { method?: string; path?: string; headers?: Record<string, string>; body?: string | Buffer; setupRequest?(req: RequestSpec, context: unknown): RequestSpec; }
    interface Options { url: string; connections?: number; duration?: number; amount?: number; pipelining?: number; method?: string; headers?: Record<string, string>; body?: string; requests?: RequestSpec[]; }
  }
  /** Runs the load; the answer is also the running instance, which `stop()` ends early. */
  function autocannon(options: autocannon.Options): Promise<autocannon.Result> & { stop(): void };
  export = autocannon;
}
