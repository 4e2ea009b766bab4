import { createServer, type IncomingMessage, type Server, type ServerResponse } from "node:http";

export type Handler = (req: IncomingMessage, body: Buffer, res: ServerResponse) => void | Promise<void>;

export function readBody(req: IncomingMessage, limit = 32 * 1024 * 1024): Promise<Buffer> {
  return new Promise((resolve, reject) => {
    const chunks: Buffer[] = [];
    let size = 0;
    req.on("data", (c: Buffer) => {
      size += c.length;
      if (size > limit) {
        reject(new Error("body too large"));
        req.destroy();
      } else chunks.push(c);
    });
    req.on("end", () => resolve(Buffer.concat(chunks)));
    req.on("error", reject);
  });
}

export function json(res: ServerResponse, status: number, value: unknown): void {
  res.writeHead(status, { "Content-Type": "application/json" });
  res.end(JSON.stringify(value));
}

export function bearer(req: IncomingMessage): string | null {
  const h = req.headers.authorization;
  return h?.startsWith("Bearer ") ? h.slice(7) : null;
}

/** Starts an HTTP server on 127.0.0.1:port and resolves once it listens. */
export function listen(name: string, port: number, handler: Handler): Promise<Server> {
  const server = createServer(async (req, res) => {
    // One request per connection: a client that reuses an idle connection just as the server closes it loses the
    // request ("Network connection lost"); an emulator busy with image work makes that race likely.
    res.setHeader("Connection", "close");
    try {
      const body = await readBody(req);
      await handler(req, body, res);
    } catch (err) {
      console.error(`[${name}]`, err);
      if (!res.headersSent) json(res, 500, { error: "emulator error" });
      else res.end();
    }
  });
  return new Promise((resolve, reject) => {
    server.once("error", reject);
    server.listen(port, "127.0.0.1", () => resolve(server));
  });
}
