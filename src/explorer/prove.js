/**
 * "Prove": reads the path's value with its Merkle proof and checks it here, in the browser, with
 * the client package's own verified read (getVerifiedValue from src/client/, served bundled as
 * /explorer/verifier.js): the block header hashes to its hash (and to a hash the reader trusts,
 * when given), the proof is of that header's state root and of this path, and its trie nodes
 * prove the value. The page adds one check of its own: the proven value is the one it shows.
 */
import { amount, blockLink, h, HASH, short } from "./dom.js";
import { rpc } from "./rpc.js";

/** JSON with sorted keys, to compare two values whatever their key order. */
function sortedJson(value) {
  if (value === null || typeof value !== "object") return JSON.stringify(value);
  if (Array.isArray(value)) return `[${value.map(sortedJson).join(",")}]`;
  const keys = Object.keys(value).sort();
  return `{${keys.map((key) => `${JSON.stringify(key)}:${sortedJson(value[key])}`).join(",")}}`;
}

const hexBytes = (hex) => (typeof hex === "string" ? Math.max(0, (hex.length - 2) / 2) : 0);

/**
 * The node's methods as the client's getVerifiedValue calls them, over this page's JSON-RPC; the
 * proof it fetched is kept to show its size.
 */
function pageMethods() {
  const seen = { proof: undefined };
  const methods = {
    getProof: async (params) => {
      seen.proof = await rpc("chain_getProof", params);
      return seen.proof;
    },
    getBlockByNumber: (params) => rpc("chain_getBlockByNumber", { ...params, getFullTransactions: false }),
    getBlockByHash: (params) => rpc("chain_getBlockByHash", { ...params, getFullTransactions: false }),
  };
  return { methods, seen };
}

/** What was proven, in words, with the proof's size. */
function provenText(proof, value) {
  const nodes = [proof.proof, ...(proof.leaves ?? []).map((leaf) => leaf.proof)].flat();
  const size = `${amount(nodes.length)} trie nodes, ${amount(nodes.reduce((sum, node) => sum + hexBytes(node), 0))} bytes`;
  const what =
    proof.leaves !== undefined
      ? `each of the ${proof.leaves.length} leaves below the path`
      : value === null
        ? "that nothing is stored at the path"
        : "the value at the path";
  return `the proof proves ${what} (${size})`;
}

/** Runs the check; returns what to show: the verdict and the list of checks. */
async function check(ref, height, shownValue, trusted) {
  // Loaded on the first "Prove" only: most visits never need it.
  const { getVerifiedValue, ProofVerificationError } = await import("./verifier.js");
  const { methods, seen } = pageMethods();
  const options = { block_number: height };
  if (trusted !== undefined) options.trusted_block_hash = trusted;
  let verified;
  try {
    verified = await getVerifiedValue(methods, ref, options);
  } catch (error) {
    if (!(error instanceof ProofVerificationError)) throw error;
    return { ok: false, reason: error.reason, text: error.message, steps: [] };
  }
  const steps = [
    `the header of block #${verified.block_number} hashes to its hash ${short(verified.block_hash)}` +
      (trusted === undefined ? "" : ", the hash you trust"),
    `the proof is of that block, its state root ${short(verified.state_root)} and the path ${verified.ref}`,
    provenText(seen.proof, verified.value),
  ];
  if (sortedJson(verified.value) !== sortedJson(shownValue)) {
    return {
      ok: false,
      reason: "page_mismatch",
      text: "the proven value is not the value shown above",
      steps,
    };
  }
  return { ok: true, verified, steps: [...steps, "the proven value is the value shown above"] };
}

function verdict(result, trusted) {
  const passed = result.steps.map((text) => h("li", { class: "ok", "data-ok": "true" }, "✓ ", text));
  if (!result.ok) {
    return [
      h(
        "p",
        { class: "verdict bad", id: "proof-verdict", "data-state": "failed", "data-reason": result.reason },
        `Not verified (${result.reason}): nothing in this answer can be trusted.`,
      ),
      h(
        "ol",
        { id: "proof-steps", class: "checks" },
        passed,
        h("li", { class: "bad", "data-ok": "false" }, "✗ ", result.text),
      ),
    ];
  }
  const { block_number: number, state_root: root, block_hash: hash } = result.verified;
  return [
    h(
      "p",
      { class: "verdict ok", id: "proof-verdict", "data-state": "verified" },
      "Verified against block ",
      blockLink(number),
      "'s state root ",
      h("span", { class: "mono", title: root }, root),
    ),
    h("ol", { id: "proof-steps", class: "checks" }, passed),
    h(
      "p",
      { class: "muted" },
      trusted === undefined
        ? `Trusted: block #${number}'s hash ${hash}, as this node gives it. Compare it with another source, or paste one you trust above.`
        : `Trusted: only the block hash you gave, ${hash}.`,
    ),
  ];
}

/** The proof part of a path page, for `ref` at `height`, whose shown value is `shownValue`. */
export function proofSection(ref, height, shownValue) {
  const trustedInput = h("input", {
    id: "proof-trusted",
    class: "field mono",
    placeholder: `optional: block #${height}'s hash from a source you trust (0x…)`,
    "aria-label": `Block #${height}'s hash from a source you trust (optional)`,
    autocomplete: "off",
    spellcheck: "false",
  });
  const button = h("button", { type: "submit", id: "prove" }, "Prove");
  const result = h("div", { id: "proof-result", "aria-live": "polite" });
  const form = h("form", { class: "inline-form", id: "proof-form" }, trustedInput, button);
  form.addEventListener("submit", async (event) => {
    event.preventDefault();
    const typed = trustedInput.value.trim();
    if (typed !== "" && !HASH.test(typed)) {
      result.replaceChildren(
        h("p", { class: "notice", "data-state": "bad-input" }, "A block hash is 0x and 64 hex digits."),
      );
      return;
    }
    const trusted = typed === "" ? undefined : typed.toLowerCase();
    button.disabled = true;
    result.replaceChildren(h("p", { class: "muted" }, "Checking…"));
    try {
      result.replaceChildren(...verdict(await check(ref, height, shownValue, trusted), trusted));
    } catch (error) {
      // Not a failed proof: the node refused or could not be reached (pruned height, network).
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
      " holds at this path. Nothing is taken on trust but that block's hash.",
    ),
    form,
    result,
  );
}
