import assert from "node:assert/strict";
import { mkdirSync, mkdtempSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { after, before, describe, it } from "node:test";
import { fileURLToPath } from "node:url";
import { type Browser, chromium, type Page } from "playwright-core";
import { type Client, type ConfirmedTransaction, connect } from "../../src/client/index.ts";
import type { DerivedAccount } from "../../src/crypto/index.ts";
import { devAccounts } from "../../src/node/index.ts";
import { chromiumArgs, ensureChromium } from "../helpers/chromium.ts";
import { freePort, type NodeProcess, spawnNode } from "../helpers/process.ts";

/**
 * The block explorer in a real browser (Debian's Chromium driven by playwright-core) against a
 * real `chain-node dev` process: live blocks, block → transaction → account, a pending
 * transaction followed until committed, search and "not found", and that chain data is shown as
 * text. Screenshots go to test-output/.
 */

const OUTPUT = fileURLToPath(new URL("../../test-output/", import.meta.url));
/** Long enough that a transaction sent right after a block stays pending while the page looks. */
const BLOCK_TIME_MS = 3_000;
const WAIT_MS = 10_000;
/** Blocks in the home page's charts (src/explorer/home.js). */
const CHART_BLOCKS = 60;

const account = (accounts: readonly DerivedAccount[], index: number): DerivedAccount => {
  const found = accounts[index];
  if (found === undefined) throw new Error(`dev account ${index} is missing`);
  return found;
};

/** The bars of the transactions chart, left to right. */
const chartBars = (page: Page): Promise<{ number: number; value: number; height: number }[]> =>
  page.locator("#chart-txs-svg rect.bar").evaluateAll((rects) =>
    rects.map((rect) => ({
      number: Number(rect.getAttribute("data-number")),
      value: Number(rect.getAttribute("data-value")),
      height: Number(rect.getAttribute("height")),
    })),
  );

/** Each bar's height is its value on one scale (within the 0.1 unit the SVG coordinates are rounded to). */
function assertProportional(bars: readonly { number: number; value: number; height: number }[]): void {
  const tallest = bars.reduce((a, b) => (b.value > a.value ? b : a));
  assert.ok(tallest.height > 0, "the tallest bar has a height");
  for (const bar of bars) {
    const expected = (tallest.height * bar.value) / tallest.value;
    assert.ok(
      Math.abs(bar.height - expected) <= 0.2,
      `bar of block ${bar.number}: ${bar.height} ≈ ${expected}`,
    );
  }
}

/** What the test changes in a chain_getProof answer on its way to the page. */
interface ProofAnswer {
  proof: string[];
  value: unknown;
}

/** The hex with one byte in its middle changed. */
function flipByte(hex: string): string {
  const at = 2 + 2 * Math.floor((hex.length - 2) / 4);
  const byte = Number.parseInt(hex.slice(at, at + 2), 16) ^ 0xff;
  return `${hex.slice(0, at)}${byte.toString(16).padStart(2, "0")}${hex.slice(at + 2)}`;
}

/** The history rows' transaction hashes, top to bottom. */
const rowHashes = (page: Page): Promise<(string | null)[]> =>
  page.locator("#history tbody tr").evaluateAll((rows) => rows.map((row) => row.getAttribute("data-hash")));

/** Written as carol's profile name: markup, to show it stays text. */
const CAROL_NAME = "Carol <b>bold</b>";

/** The number shown with thousands separators, as a number. */
const shownNumber = (text: string | null): number => Number((text ?? "").replaceAll(",", ""));

describe("explorer (Chromium)", () => {
  const home = mkdtempSync(join(tmpdir(), "chain-node-explorer-"));
  let node: NodeProcess | undefined;
  let browser: Browser | undefined;
  let page: Page;
  let client: Client;
  const problems: string[] = [];
  const accounts = devAccounts();
  const alice = account(accounts, 1);
  const bob = account(accounts, 2);
  const carol = account(accounts, 5);
  /** The block that wrote carol's first profile. */
  let profileBlock = -1;
  /** Every transaction carol sent, committed, in the order sent. */
  const carolTxs: ConfirmedTransaction[] = [];
  let firstHash = "";
  let firstBlock = -1;

  /**
   * Opens the explorer at `route` in a new document: after a mere hash change the previous view
   * stays on screen until the new one renders, and a wait could match what it still shows.
   */
  const openExplorer = async (route: string): Promise<void> => {
    await page.goto("about:blank");
    await page.goto(`${node?.url}/explorer#${route}`);
  };

  after(async () => {
    await browser?.close();
    await node?.stop();
    rmSync(home, { recursive: true, force: true });
  });

  before(async () => {
    const executablePath = ensureChromium();
    const port = await freePort();
    node = await spawnNode(
      [
        "dev",
        "--home",
        home,
        "--rpc-port",
        String(port),
        "--block-time",
        String(BLOCK_TIME_MS),
        "--log-level",
        "warn",
      ],
      port,
    );
    client = connect(node.url);
    // Three transactions in one block before the page opens: the charts start with two blocks.
    const sender = client.wallet(account(accounts, 3).privateKey);
    const sent = await Promise.all([1, 2, 3].map((n) => sender.transfer(account(accounts, 4).address, n)));
    for (const hash of sent) await client.waitForTransaction(hash, { timeoutMs: WAIT_MS });
    browser = await chromium.launch({ executablePath, args: chromiumArgs(), headless: true });
    page = await browser.newPage({ viewport: { width: 1280, height: 900 } });
    page.setDefaultTimeout(WAIT_MS);
    // Script errors and CSP violations both surface here; the last test asserts there were none.
    page.on("pageerror", (error) => problems.push(`page error: ${error.message}`));
    page.on("console", (message) => {
      if (message.type() === "error") problems.push(`console error: ${message.text()}`);
    });
    // Not every violation reaches the console (a refused WebAssembly compile does not): the
    // document's own securitypolicyviolation events report each one.
    await page.exposeFunction("reportCspViolation", (text: string) =>
      problems.push(`CSP violation: ${text}`),
    );
    await page.addInitScript({
      content: `document.addEventListener("securitypolicyviolation", (event) =>
        window.reportCspViolation(event.violatedDirective + " " + event.blockedURI));`,
    });
    mkdirSync(OUTPUT, { recursive: true });
  });

  it("links the explorer from GET /", async () => {
    await page.goto(`${node?.url}/`);
    await page.getByRole("link", { name: "Open the block explorer" }).click();
    await page.waitForURL(/\/explorer/);
  });

  it("lists the latest blocks and goes live", async () => {
    await page.locator('#latest-blocks tr[data-number="0"]').waitFor();
    await page.locator("#live", { hasText: /^live$/ }).waitFor();
  });

  it("charts transactions per block and block intervals: one mark per block, with the latest as text", async () => {
    const head = await client.getRecentBlockNumber();
    const blocks = await client.getBlocks({ from: 0, to: head });
    const bars = await chartBars(page);
    assert.deepEqual(
      bars.map((bar) => [bar.number, bar.value]),
      blocks.slice(-CHART_BLOCKS).map((block) => [block.number, block.transactions.length]),
      `one bar per block up to #${head}, as high as its transaction count`,
    );
    assertProportional(bars);
    assert.ok(
      bars.some((bar) => bar.value >= 3),
      "the block of the three transactions sent before the page opened",
    );
    // One interval per pair of consecutive blocks held.
    assert.equal(
      await page.locator("#chart-interval-svg circle.point").count(),
      Math.min(head, CHART_BLOCKS),
    );
    assert.match(
      (await page.locator("#chart-txs-latest").textContent()) ?? "",
      new RegExp(`block #${head} `),
    );
    for (const chart of ["chart-txs", "chart-interval"]) {
      const labelledBy = await page.locator(`#${chart}-svg`).getAttribute("aria-labelledby");
      assert.ok(
        (await page.locator(`#${labelledBy}`).textContent())?.includes("last 60 blocks"),
        `${chart} caption`,
      );
    }
  });

  it("shows a new block in the list as soon as it is committed", async () => {
    firstHash = await client.wallet(alice.privateKey).transfer(bob.address, 12_345);
    const committed = await client.waitForTransaction(firstHash, { timeoutMs: WAIT_MS });
    firstBlock = committed.block_number;
    const row = page.locator(`#latest-blocks tr[data-number="${firstBlock}"]`);
    await row.waitFor(); // no reload: the newBlocks subscription put it there
    assert.equal(
      await row.locator("td").nth(2).textContent(),
      "1",
      `block ${firstBlock} has one transaction`,
    );
    // The charts took the block too: a bar of height 1 transaction, and its interval.
    const bar = page.locator(`#chart-txs-svg rect.bar[data-number="${firstBlock}"]`);
    await bar.waitFor({ state: "attached" });
    assert.equal(await bar.getAttribute("data-value"), "1");
    assert.ok(Number(await bar.getAttribute("height")) > 0, "a transaction makes a visible bar");
    const [previous, block] = await client.getBlocks({ from: firstBlock - 1, to: firstBlock });
    const point = page.locator(`#chart-interval-svg circle.point[data-number="${firstBlock}"]`);
    assert.equal(
      Number(await point.getAttribute("data-value")),
      (block?.timestamp ?? 0) - (previous?.timestamp ?? 0),
    );
    assert.equal(
      await page.locator("#chart-txs-svg rect.bar").count(),
      Math.min(firstBlock + 1, CHART_BLOCKS),
    );
    assert.match(
      (await page.locator("#chart-interval-latest").textContent()) ?? "",
      new RegExp(`block #${firstBlock} came [\\d,]+ ms after #${firstBlock - 1}`),
    );
    await page.screenshot({ path: join(OUTPUT, "explorer-blocks.png"), fullPage: true });
  });

  it("goes from the block to its transaction to the accounts, with balances as the node reports them", async () => {
    await page.locator(`#latest-blocks tr[data-number="${firstBlock}"] a`).first().click();
    await page.getByRole("heading", { name: `Block #${firstBlock}` }).waitFor();
    await page.locator(`#block-transactions a[href="#/tx/${firstHash}"]`).click();
    await page.getByRole("heading", { name: "Transaction" }).waitFor();
    assert.equal(await page.locator("#tx-status").textContent(), "Committed");
    assert.equal(await page.locator("#tx-result").textContent(), "success (code 0)");
    await page.screenshot({ path: join(OUTPUT, "explorer-transaction.png"), fullPage: true });

    for (const who of [bob, alice]) {
      await page.goto(`${node?.url}/explorer#/tx/${firstHash}`);
      await page.locator(`#view a[href="#/address/${who.address}"]`).first().click();
      const balance = page.locator("#account-balance");
      await balance.waitFor();
      const expected = await client.getBalance({ address: who.address });
      assert.equal(shownNumber(await balance.textContent()), expected, `balance of ${who.address}`);
      assert.equal(Number(await balance.getAttribute("data-value")), expected);
      assert.equal(
        await page.locator("#account-nonce").textContent(),
        String(await client.getNonce({ address: who.address })),
      );
      assert.equal(await page.locator("#account-validator").textContent(), "no");
    }
    assert.equal(await client.getBalance({ address: bob.address }), 1_000_000_000_000 + 12_345);
  });

  it("follows a pending transaction until it is committed", async () => {
    // Right after a block, the next one waits for the block time: the transaction stays pending.
    const wallet = client.wallet(alice.privateKey);
    await client.waitForTransaction(await wallet.transfer(bob.address, 1), { timeoutMs: WAIT_MS });
    const hash = await wallet.transfer(bob.address, 2);
    await page.goto(`${node?.url}/explorer#/tx/${hash}`);
    await page.locator("#tx-status", { hasText: /^Pending$/ }).waitFor({ timeout: BLOCK_TIME_MS });
    await page.locator("#tx-status", { hasText: /^Committed$/ }).waitFor();
    const committed = await client.waitForTransaction(hash, { timeoutMs: WAIT_MS });
    await page.locator(`#view a[href="#/block/${committed.block_number}"]`).waitFor();
  });

  it("shows chain data as text, never as markup", async () => {
    const markup = "<img src=x id=injected><script>window.injected=1</script>";
    const hash = await client.wallet(alice.privateKey).setUserData("note", markup);
    await client.waitForTransaction(hash, { timeoutMs: WAIT_MS });
    await page.goto(`${node?.url}/explorer#/tx/${hash}`);
    await page.locator("#view pre", { hasText: "<img" }).waitFor();
    assert.equal(await page.locator("#injected").count(), 0, "no element was made from the value");
    assert.ok(
      (await page.locator("#view pre").textContent())?.includes(markup),
      "the value is shown as written",
    );
  });

  it("shows an account's /users data as a tree of text, linked to the path browser and kept live", async () => {
    const wallet = client.wallet(carol.privateKey);
    const transfer = await wallet.transfer(bob.address, 7);
    // 26 writes in one block and a profile after them: more than the page of 25 the explorer asks for.
    const items = await wallet.sendBatch(
      Array.from({ length: 26 }, (_, i) => ({ ref: `/users/${carol.address}/items/n${i}`, value: i })),
    );
    const profile = await wallet.setUserData("profile", { name: CAROL_NAME, langs: ["en", "fr"], age: 41 });
    carolTxs.push(
      ...(await Promise.all(
        [transfer, ...items, profile].map((hash) => client.waitForTransaction(hash, { timeoutMs: WAIT_MS })),
      )),
    );
    profileBlock = carolTxs.at(-1)?.block_number ?? -1;

    await openExplorer(`/address/${carol.address}`);
    const data = page.locator("#account-data-value");
    const name = data.locator('li[data-key="profile"] li[data-key="name"]');
    await name.waitFor();
    assert.equal(await name.locator("code").textContent(), JSON.stringify(CAROL_NAME));
    assert.equal(await data.locator("b").count(), 0, "no element was made from the value");
    assert.deepEqual(
      await data
        .locator('li[data-key="items"] > ul > li')
        .evaluateAll((items) => items.map((item) => item.getAttribute("data-key"))),
      Array.from({ length: 26 }, (_, i) => `n${i}`),
      "keys in natural order",
    );
    assert.equal(
      await data.locator('a.json-key:text-is("profile")').getAttribute("href"),
      `#/state/users/${carol.address}/profile`,
    );

    // A write while the page is open shows without a reload (subscription topic "value").
    const status = await wallet.setUserData("status", "away");
    carolTxs.push(await client.waitForTransaction(status, { timeoutMs: WAIT_MS }));
    await data.locator('li[data-key="status"]', { hasText: '"away"' }).waitFor();
    await page.screenshot({ path: join(OUTPUT, "explorer-account.png"), fullPage: true });
  });

  it("lists an account's history newest first, a page at a time, from both sides of a transfer", async () => {
    const newestFirst = [...carolTxs]
      .sort((a, b) => b.block_number - a.block_number || b.index - a.index)
      .map((tx) => tx.hash);
    await openExplorer(`/address/${carol.address}`);
    const rows = page.locator("#history tbody tr");
    await page.locator("#history-older").waitFor();
    assert.deepEqual(await rowHashes(page), newestFirst.slice(0, 25), "the first page: the newest 25");
    await page.locator("#history-older").click();
    await page.locator("#history-older").waitFor({ state: "hidden" });
    assert.equal(await rows.count(), newestFirst.length);
    assert.deepEqual(await rowHashes(page), newestFirst, "both pages: every transaction once, newest first");
    assert.match((await page.locator("#history-status").textContent()) ?? "", /that is all/);
    const transfer = carolTxs[0]?.hash;
    assert.equal(
      await rows.last().getAttribute("data-hash"),
      transfer,
      "the oldest: carol's transfer to bob",
    );
    assert.equal(await rows.last().locator(".badge").textContent(), "sent");
    // A data write links to its path at the block that wrote it.
    const profile = carolTxs.find((tx) => tx.operation.ref.endsWith("/profile"));
    const write = page.locator(`#history tbody tr[data-hash="${profile?.hash}"] a[href^="#/state/"]`);
    assert.equal(
      await write.getAttribute("href"),
      `#/state/users/${carol.address}/profile?block=${profile?.block_number}`,
    );
    await page.screenshot({ path: join(OUTPUT, "explorer-account.png"), fullPage: true });

    // The same transfer, seen from the side that received it.
    await openExplorer(`/address/${bob.address}`);
    const received = page.locator(`#history tbody tr[data-hash="${transfer}"]`);
    await received.waitFor();
    assert.equal(await received.locator(".badge").textContent(), "received");
    assert.equal(await page.locator("#history tbody tr").first().getAttribute("data-hash"), transfer);
  });

  it("browses the data tree: child links, breadcrumbs, a leaf, live at the head, a past height, an empty path", async () => {
    await openExplorer("/state");
    await page.locator('#state-roots a[href="#/state/users"]').click();
    await page.locator(`#state-children a[href="#/state/users/${carol.address}"]`).click();
    await page.locator(`#state-children a[href="#/state/users/${carol.address}/profile"]`).click();
    await page.locator(`#state-children a[href="#/state/users/${carol.address}/profile/name"]`).click();
    const leaf = page.locator('#state-value[data-kind="leaf"]');
    await leaf.waitFor();
    assert.equal(await leaf.textContent(), JSON.stringify(CAROL_NAME));
    assert.deepEqual(
      await page.locator("#breadcrumbs a").allTextContents(),
      ["/", "users", carol.address, "profile"],
      "each parent path, linked",
    );

    // At the head the page follows the value: a new write shows without a reload.
    const renamed = await client.wallet(carol.privateKey).setUserData("profile/name", "Carol II");
    const written = await client.waitForTransaction(renamed, { timeoutMs: WAIT_MS });
    await page.locator('#state-value[data-kind="leaf"]', { hasText: '"Carol II"' }).waitFor();
    await page.locator("#state-height", { hasText: `#${written.block_number}` }).waitFor();

    // The value at the height where the first name was written, through the form.
    await page.locator("#state-block").fill(String(profileBlock));
    await page.locator("#state-form button[type=submit]").click();
    await page.waitForURL(new RegExp(`\\?block=${profileBlock}$`));
    await page.locator('#state-value[data-kind="leaf"]', { hasText: JSON.stringify(CAROL_NAME) }).waitFor();
    await page.locator("#breadcrumbs a", { hasText: "profile" }).click();
    await page.waitForURL(new RegExp(`/profile\\?block=${profileBlock}$`));
    await page.locator('#state-value[data-kind="object"] #state-children tr[data-key="langs"]').waitFor();

    // A path with nothing stored, found through the search box.
    await page.locator("#search-input").fill(`/users/${carol.address}/nothing-here`);
    await page.locator("#search-input").press("Enter");
    await page.locator('#state-value[data-state="empty"]').waitFor();
    await page.screenshot({ path: join(OUTPUT, "explorer-state.png"), fullPage: true });
  });

  it("proves values in the page: verified against the block's state root with the client's verifier", async () => {
    const cases = [
      ["a leaf", `users/${carol.address}/profile/name`],
      ["a subtree", `users/${carol.address}/profile`],
      ["an absence", `users/${carol.address}/nothing-here`],
    ];
    for (const [what, path] of cases) {
      await openExplorer(`/state/${path}?block=${profileBlock}`);
      await page.locator("#prove").click();
      const verdict = page.locator('#proof-verdict[data-state="verified"]');
      await verdict.waitFor();
      const block = await client.getBlockByNumber({ number: profileBlock });
      assert.ok(
        (await verdict.textContent())?.includes(`block #${profileBlock}'s state root ${block?.state_root}`),
        `${what}: verified against block ${profileBlock}'s state root`,
      );
      assert.equal(await page.locator('#proof-steps li[data-ok="false"]').count(), 0, what);
      assert.equal(
        await page.locator('#proof-steps li[data-ok="true"]').count(),
        4,
        `${what}: every check ran`,
      );
      if (what === "a leaf") {
        await page.screenshot({ path: join(OUTPUT, "explorer-proof.png"), fullPage: true });
      }
    }
  });

  it("proves against a block hash the reader trusts, and refuses one of another block", async () => {
    const block = await client.getBlockByNumber({ number: profileBlock });
    const other = await client.getBlockByNumber({ number: profileBlock - 1 });
    await openExplorer(`/state/users/${carol.address}/profile/name?block=${profileBlock}`);
    await page.locator("#proof-trusted").fill(block?.hash ?? "");
    await page.locator("#prove").click();
    await page.locator('#proof-verdict[data-state="verified"]').waitFor();
    await page
      .locator("#proof-result", { hasText: `only the block hash you gave, ${block?.hash}` })
      .waitFor();

    await page.locator("#proof-trusted").fill(other?.hash ?? "");
    await page.locator("#prove").click();
    const refused = page.locator('#proof-verdict[data-state="failed"]');
    await refused.waitFor();
    assert.equal(await refused.getAttribute("data-reason"), "header_mismatch");
  });

  it("shows a proof altered in transit as not verified", async () => {
    // Flip one byte in the middle of the proof's last trie node (the leaf), or change the value:
    // the page must catch either, whatever the node says.
    const alterations: [string, string, (result: ProofAnswer) => void][] = [
      [
        "a byte of a trie node",
        "hash_mismatch",
        (result) => {
          const last = result.proof.length - 1;
          result.proof[last] = flipByte(result.proof[last] ?? "");
        },
      ],
      [
        "the value",
        "value_mismatch",
        (result) => {
          result.value = "Mallory";
        },
      ],
    ];
    for (const [what, reason, alter] of alterations) {
      await page.route(
        (url) => url.pathname === "/",
        async (route) => {
          const call = route.request().postDataJSON() as { method?: string } | null;
          if (call?.method !== "chain_getProof") return route.continue();
          const response = await route.fetch();
          const reply = (await response.json()) as { result: ProofAnswer };
          alter(reply.result);
          await route.fulfill({ response, json: reply });
        },
      );
      await openExplorer(`/state/users/${carol.address}/profile/name?block=${profileBlock}`);
      await page.locator("#prove").click();
      const verdict = page.locator('#proof-verdict[data-state="failed"]');
      await verdict.waitFor();
      assert.equal(await verdict.getAttribute("data-reason"), reason, what);
      assert.match((await verdict.textContent()) ?? "", new RegExp(`^Not verified \\(${reason}\\)`), what);
      assert.equal(await page.locator('#proof-steps li[data-ok="false"]').count(), 1, what);
      if (what === "a byte of a trie node") {
        await page.screenshot({ path: join(OUTPUT, "explorer-proof-failed.png"), fullPage: true });
      }
      await page.unrouteAll();
    }
  });

  it("says not found for an unknown hash, transaction or account", async () => {
    const unknownHash = `0x${"ab".repeat(32)}`;
    await page.goto(`${node?.url}/explorer#/`);
    await page.locator("#search-input").fill(unknownHash);
    await page.locator("#search-input").press("Enter");
    await page.locator('[data-state="not-found"]', { hasText: "not found" }).waitFor();
    await page.screenshot({ path: join(OUTPUT, "explorer-not-found.png"), fullPage: true });

    await page.goto(`${node?.url}/explorer#/tx/${unknownHash}`);
    await page.locator('[data-state="not-found"]').waitFor();
    await page.goto(`${node?.url}/explorer#/block/999999`);
    await page.locator('[data-state="not-found"]').waitFor();
    await page.goto(`${node?.url}/explorer#/address/0x${"00".repeat(19)}01`);
    await page.locator('[data-state="not-found"]').waitFor();
  });

  it("finds a block by number and by hash, a transaction by hash, and an account by address", async () => {
    const block = await client.getBlockByNumber({ number: firstBlock });
    assert.ok(block !== null);
    const search = async (text: string) => {
      await page.locator("#search-input").fill(text);
      await page.locator("#search-input").press("Enter");
    };
    await search(String(firstBlock));
    await page.getByRole("heading", { name: `Block #${firstBlock}` }).waitFor();
    await search(block.hash);
    await page.waitForURL(new RegExp(`#/block/${firstBlock}$`));
    await search(firstHash);
    await page.waitForURL(new RegExp(`#/tx/${firstHash}$`));
    await search(bob.address.toLowerCase());
    await page.locator("#account-balance").waitFor();
  });

  it("lists the validators with their stakes", async () => {
    const validator = account(accounts, 0);
    await page.goto(`${node?.url}/explorer#/validators`);
    const row = page.locator("#validators tbody tr", { hasText: validator.address });
    await row.waitFor();
    const stake = await client.getConsensusStakeAmount({ address: validator.address });
    assert.equal(shownNumber(await row.locator("td").nth(1).textContent()), stake);
    assert.equal(await page.locator("#validators tbody tr").count(), 1, "a dev chain has one validator");
    await page.screenshot({ path: join(OUTPUT, "explorer-validators.png"), fullPage: true });
  });

  it("ran without script errors or Content-Security-Policy violations", () => {
    assert.deepEqual(problems, []);
  });
});
