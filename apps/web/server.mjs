// The console's HTTP server: Next.js's own request handler behind one check of ours.
//   node server.mjs [-H host] [-p port]      (what `next start` would do, plus the check)
//
// Why not `next start`: a request whose method the Fetch standard forbids (TRACE, TRACK,
// CONNECT) makes Next's route handlers throw while building their Request, so it answered 500.
// Methods the console and the REST API never serve are answered 405 here, before Next
// (issue 8, #11: the server answers only what the OpenAPI document describes).
import { createServer } from "node:http";
import { parseArgs } from "node:util";
import next from "next";

const SERVED_METHODS = ["GET", "HEAD", "POST", "PUT", "PATCH", "DELETE", "OPTIONS"];

const { values } = parseArgs({
  options: { hostname: { type: "string", short: "H" }, port: { type: "string", short: "p" } },
});
const hostname = values.hostname ?? process.env.HOSTNAME ?? "127.0.0.1";
const port = Number(values.port ?? process.env.PORT ?? 3000);

const app = next({ dev: false, hostname, port, dir: import.meta.dirname });
const handle = app.getRequestHandler();
await app.prepare();

createServer((req, res) => {
  if (!SERVED_METHODS.includes(req.method ?? "")) {
    res.writeHead(405, { allow: SERVED_METHODS.join(", "), "content-type": "application/json" });
    res.end(JSON.stringify({ code: "METHOD_NOT_SUPPORTED", message: `${req.method} is not served here` }));
    return;
  }
  handle(req, res);
}).listen(port, hostname, () => {
  console.log(`Edgefleet console ready on http://${hostname}:${port}`);
});
