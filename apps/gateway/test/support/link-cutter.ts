import { createServer, type Server, type Socket, connect as tcpConnect } from "node:net";

/**
 * A TCP relay standing in for the WAN link between a site's leaf node and the hub: `cut()`
 * drops every connection and refuses new ones until `restore()`. (A failing link is something
 * no user runs on purpose, so simulating it is fair game.)
 */
export class LinkCutter {
  private readonly sockets = new Set<Socket>();
  private isCut = false;

  private constructor(
    private readonly server: Server,
    readonly port: number,
  ) {}

  static async start(targetPort: number): Promise<LinkCutter> {
    let cutter: LinkCutter | undefined;
    const server = createServer((client) => {
      if (!cutter || cutter.isCut) {
        client.destroy();
        return;
      }
      const upstream = tcpConnect(targetPort, "127.0.0.1");
      const owner = cutter;
      for (const socket of [client, upstream]) {
        owner.sockets.add(socket);
        socket.on("close", () => owner.sockets.delete(socket));
        socket.on("error", () => socket.destroy());
      }
      client.pipe(upstream).pipe(client);
      client.on("close", () => upstream.destroy());
      upstream.on("close", () => client.destroy());
    });
    await new Promise<void>((resolve) => server.listen(0, "127.0.0.1", resolve));
    const address = server.address();
    if (!address || typeof address === "string") throw new Error("no relay port");
    cutter = new LinkCutter(server, address.port);
    return cutter;
  }

  cut(): void {
    this.isCut = true;
    for (const socket of this.sockets) socket.destroy();
  }

  restore(): void {
    this.isCut = false;
  }

  async close(): Promise<void> {
    this.cut();
    await new Promise((resolve) => this.server.close(resolve));
  }
}
