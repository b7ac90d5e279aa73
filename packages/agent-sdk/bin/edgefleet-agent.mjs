#!/usr/bin/env node
// Runs the TypeScript CLI through tsx's loader in this same process (signals reach the agent directly).
import { register } from "tsx/esm/api";

register();
await import("../src/cli.ts");
