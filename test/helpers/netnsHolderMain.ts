import { HostNetwork } from "./netns.ts";

/**
 * A process that makes a two-host network with a long sleep running inside host 0, prints
 * {"namespaces":[…],"sleeper":PID}, and then waits (`wait`) or dies of an uncaught exception
 * (`throw`): test/e2e/netns.test.ts kills it in different ways and checks what is left.
 *
 *   netnsHolderMain.ts PREFIX wait|throw
 */

const [prefix = "cn", mode = "wait"] = process.argv.slice(2);
const network = await HostNetwork.create(2, { prefix });
const sleeper = network.spawn(0, "sleep", ["600"]);
process.stdout.write(
  `${JSON.stringify({ namespaces: [network.bridgeNs, ...network.hosts.map((h) => h.ns)], sleeper: sleeper.pid })}\n`,
);
if (mode === "throw") {
  setTimeout(() => {
    throw new Error("thrown on purpose, with the network still up");
  }, 200);
} else {
  setInterval(() => {}, 60_000);
}
