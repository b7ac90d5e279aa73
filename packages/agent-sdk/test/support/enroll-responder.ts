import type { NatsConnection, Subscription } from "@nats-io/transport-node";
import {
  decodeMessage,
  type EnrollReplyBody,
  type EnrollRequest,
  encodeMessage,
  sealEnrollReply,
  verifyEnrollProof,
} from "../../src/protocol/index.js";
import { testNodeJwt } from "./credentials.js";

/**
 * Stand-in for the gateway's enrollment handler: the token "approve-me" is approved after
 * `pendingAnswers` pending replies per key, "reject-me" is rejected. Issues wids n0, n1, …, with
 * test credentials of the tests' site.
 */
export class EnrollResponder {
  readonly requests: EnrollRequest[] = [];
  private readonly asked = new Map<string, number>();
  private subscription: Subscription | undefined;
  private issued = 0;

  constructor(
    private readonly nc: NatsConnection,
    private readonly pendingAnswers = 0,
  ) {}

  start(): void {
    this.subscription = this.nc.subscribe("ef.enroll", {
      callback: (error, msg) => {
        if (error) return;
        const decoded = decodeMessage("enrollRequest", msg.data);
        if (!decoded.ok) return;
        const request = decoded.msg;
        this.requests.push(request);
        // Answers sealed to the requester, as the gateway does.
        const answer = (body: EnrollReplyBody) =>
          msg.respond(encodeMessage("enrollReply", sealEnrollReply(body, request.xk)));
        if (!verifyEnrollProof(request)) {
          answer({ v: 1, st: "rejected", err: "proof of key possession failed" });
          return;
        }
        if (request.tok !== "approve-me") {
          answer({ v: 1, st: "rejected", err: "unknown token" });
          return;
        }
        const asked = (this.asked.get(request.key) ?? 0) + 1;
        this.asked.set(request.key, asked);
        if (asked <= this.pendingAnswers) {
          answer({ v: 1, st: "pending", retry: 1 });
          return;
        }
        const wid = `n${this.issued++}`;
        answer({
          v: 1,
          st: "approved",
          nid: `node-${wid}`,
          wid,
          org: "o1",
          jwt: testNodeJwt(wid),
        });
      },
    });
  }

  stop(): void {
    this.subscription?.unsubscribe();
  }
}
