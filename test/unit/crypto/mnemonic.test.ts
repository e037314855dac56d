import assert from "node:assert/strict";
import { describe, it } from "node:test";
import { deriveAccounts, hexToBytes, privateKeyToAddress } from "../../../src/crypto/index.ts";

const TEST_MNEMONIC = "test test test test test test test test test test test junk";

describe("deriveAccounts", () => {
  it("gives the hardhat/anvil accounts at m/44'/60'/0'/0/i", () => {
    const accounts = deriveAccounts(TEST_MNEMONIC, 3);
    assert.deepEqual(
      accounts.map((a) => a.address),
      [
        "0xf39Fd6e51aad88F6F4ce6aB8827279cffFb92266",
        "0x70997970C51812dc3A010C7d01b50e0d17dc79C8",
        "0x3C44CdDdB6a900fa2b585dd299e03d12FA4293BC",
      ],
      "the first three hardhat addresses",
    );
    assert.equal(
      accounts[0]?.privateKey,
      "0xac0974bec39a17e36ba4a6b4d238ff944bacb478cbed5efcae784d7bf4f2ff80",
      "hardhat account 0 private key",
    );
    for (const [i, account] of accounts.entries()) {
      assert.equal(
        privateKeyToAddress(hexToBytes(account.privateKey)),
        account.address,
        `account ${i} key matches`,
      );
    }
  });

  it("gives hardhat's account 9 (the last a dev chain funds)", () => {
    const accounts = deriveAccounts(TEST_MNEMONIC, 10);
    assert.equal(accounts[9]?.address, "0xa0Ee7A142d267C1f36714E4a8F75612F20a79720");
  });

  it("gives no accounts for a count of 0", () => {
    assert.deepEqual(deriveAccounts(TEST_MNEMONIC, 0), []);
  });
});
