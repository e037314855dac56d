/**
 * "Prove": fetches the path's Merkle proof (chain_getProof) and its block's header, and checks
 * them here, in the browser, with the client package's own verifier (src/client/proof.ts, served
 * bundled as /explorer/verifier.js): the header hashes to the block hash, the proof is of that
 * header's state root, the trie nodes prove the value, and the value is the one the page shows.
 * The node is trusted for nothing but the block hash, which the reader can compare elsewhere.
 */
import { amount, blockLink, h, short } from "./dom.js";
import { rpc } from "./rpc.js";

/** JSON with sorted keys, to compare two values whatever their key order. */
function sortedJson(value) {
  if (value === null || typeof value !== "object") return JSON.stringify(value);
  if (Array.isArray(value)) return `[${value.map(sortedJson).join(",")}]`;
  const keys = Object.keys(value).sort();
  return `{${keys.map((key) => `${JSON.stringify(key)}:${sortedJson(value[key])}`).join(",")}}`;
}

const hexBytes = (hex) => (typeof hex === "string" ? Math.max(0, (hex.length - 2) / 2) : 0);

/** Every check, in order; a failed one ends the list (what follows would rest on it). */
async function runChecks(ref, height, shownValue) {
  const steps = [];
  const step = (ok, text) => {
    steps.push({ ok, text });
    return ok;
  };
  const proof = await rpc("chain_getProof", { ref, block_number: height });
  const header = await rpc("chain_getBlockByNumber", {
    number: proof.block_number,
    getFullTransactions: false,
  });
  if (!step(header !== null, `block #${proof.block_number} exists`)) return { steps, proof };
  // The verifier is loaded on the first "Prove" only: most visits never need it.
  const verifier = await import("./verifier.js");

  const computed = verifier.hashBlockHeader(header);
  if (
    !step(
      computed === header.hash,
      `the header of block #${header.number} hashes to its hash ${short(header.hash)}`,
    )
  ) {
    return { steps, proof, header };
  }
  const sameBlock = proof.block_hash === header.hash && proof.state_root === header.state_root;
  if (!step(sameBlock, `the proof is of that block and its state root ${short(header.state_root)}`)) {
    return { steps, proof, header };
  }
  let proven;
  const nodes = [proof.proof, ...(proof.leaves ?? []).map((leaf) => leaf.proof)].flat();
  try {
    proven = verifier.verifyProof(header.state_root, proof);
    const what =
      proof.leaves !== undefined
        ? `each of the ${proof.leaves.length} leaves below the path`
        : proven === null
          ? "that nothing is stored at the path"
          : "the value at the path";
    const size = `${amount(nodes.length)} nodes, ${amount(nodes.reduce((sum, node) => sum + hexBytes(node), 0))} bytes`;
    step(true, `the trie nodes prove ${what} (${size})`);
  } catch (error) {
    const name = error instanceof verifier.ProofVerificationError ? "" : `${error.name}: `;
    step(false, `the trie nodes do not prove the value: ${name}${error.message}`);
    return { steps, proof, header };
  }
  step(sortedJson(proven) === sortedJson(shownValue), "the proven value is the value shown above");
  return { steps, proof, header };
}

function verdict({ steps, header }) {
  const failed = steps.find((s) => !s.ok);
  const list = h(
    "ol",
    { id: "proof-steps", class: "checks" },
    steps.map((s) =>
      h("li", { class: s.ok ? "ok" : "bad", "data-ok": String(s.ok) }, s.ok ? "✓ " : "✗ ", s.text),
    ),
  );
  const summary =
    failed === undefined
      ? h(
          "p",
          { class: "verdict ok", id: "proof-verdict", "data-state": "verified" },
          "Verified against block ",
          blockLink(header.number),
          "'s state root ",
          h("span", { class: "mono", title: header.state_root }, header.state_root),
        )
      : h(
          "p",
          { class: "verdict bad", id: "proof-verdict", "data-state": "failed" },
          `Not verified: ${failed.text}.`,
        );
  return [summary, list];
}

/** The proof part of a path page, for `ref` at `height`, whose shown value is `shownValue`. */
export function proofSection(ref, height, shownValue) {
  const button = h("button", { type: "button", id: "prove" }, "Prove");
  const result = h("div", { id: "proof-result", "aria-live": "polite" });
  button.addEventListener("click", async () => {
    button.disabled = true;
    result.replaceChildren(h("p", { class: "muted" }, "Checking…"));
    try {
      result.replaceChildren(...verdict(await runChecks(ref, height, shownValue)));
    } catch (error) {
      result.replaceChildren(
        h(
          "p",
          { class: "verdict bad", id: "proof-verdict", "data-state": "error" },
          `Could not check: ${error.message}`,
        ),
      );
    } finally {
      button.disabled = false;
    }
  });
  return h(
    "section",
    { id: "proof" },
    h("h2", {}, "Proof"),
    h(
      "p",
      { class: "muted" },
      "Checks in this page, with the client's verifier, what the state committed by block ",
      blockLink(height),
      " holds at this path: nothing but that block's hash is taken on trust.",
    ),
    button,
    result,
  );
}
