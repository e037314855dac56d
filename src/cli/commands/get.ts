import { Command, Option } from "commander";
import { ProofVerificationError } from "../../client/index.ts";
import { parseIntFlag } from "../options.ts";
import { clientOf, describeError, type RpcFlags, rpcOptions } from "./clientOptions.ts";

interface GetFlags extends RpcFlags {
  height?: number;
  prove?: boolean;
  trustedBlockHash?: string;
}

/**
 * `chain-node get <ref>`: the JSON value at a path of the data tree on a running node, at the head
 * or a past height (chain_getValue). With --prove the value comes with its Merkle proof and is
 * checked here, against the block header it names (chain-node/client's getVerifiedValue): a node
 * that answers a wrong value fails the check instead of being believed.
 */
export function getCommand(): Command {
  const command = new Command("get")
    .description("the value at a path of the data tree (e.g. /users/0x…/profile), optionally proven")
    .argument("<ref>", "path into the data tree")
    .addOption(
      new Option("--height <n>", "read at this block (default: the head)").argParser(
        parseIntFlag(0, Number.MAX_SAFE_INTEGER),
      ),
    )
    .addOption(new Option("--prove", "fetch the Merkle proof and verify it against the block header"))
    .addOption(
      new Option(
        "--trusted-block-hash <hash>",
        "with --prove: the block hash you trust (its height is read)",
      ).implies({
        prove: true,
      }),
    );
  for (const option of rpcOptions()) command.addOption(option);
  return command.action(async (ref: string, flags: GetFlags) => {
    const client = clientOf(flags);
    try {
      if (flags.prove !== true) {
        const value = await client.getValue(
          flags.height === undefined ? { ref } : { ref, block_number: flags.height },
        );
        console.log(JSON.stringify(value, null, flags.json ? undefined : 2));
        return;
      }
      const verified = await client.getVerifiedValue(ref, {
        ...(flags.height === undefined ? {} : { block_number: flags.height }),
        ...(flags.trustedBlockHash === undefined ? {} : { trusted_block_hash: flags.trustedBlockHash }),
      });
      if (flags.json) {
        console.log(JSON.stringify({ ...verified, verified: true }));
        return;
      }
      console.log(JSON.stringify(verified.value, null, 2));
      console.error(
        `verified: ${verified.ref} in block ${verified.block_number} (${verified.block_hash}), state root ${verified.state_root}`,
      );
    } catch (error) {
      if (error instanceof ProofVerificationError)
        throw new Error(`proof does not verify (${error.reason}): ${error.message}`);
      throw describeError(error);
    }
  });
}
