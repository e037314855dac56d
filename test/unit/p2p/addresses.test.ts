import assert from "node:assert/strict";
import { describe, it } from "node:test";
import { multiaddr } from "@multiformats/multiaddr";
import {
  addrsForRequester,
  announceFilter,
  checkAnnounceAddrs,
  dialableFrom,
  isLocalOnlyIp,
} from "../../../src/p2p/addresses.ts";
import { P2pError } from "../../../src/p2p/errors.ts";

/**
 * Which addresses go to whom (p2p/addresses.ts): a node never hands a peer on another host an
 * address that only works on its own machine, and never dials another host's loopback.
 */

const ID = "12D3KooWQYhTNQdmr3ArTeUHRYzFg94BKyTkoWBDWez9kSCVe2Xo";
const ma = (text: string) => multiaddr(text);
const texts = (addrs: readonly { toString(): string }[]) => addrs.map(String);

const LOOPBACK = ma(`/ip4/127.0.0.1/tcp/26656/p2p/${ID}`);
const PRIVATE = ma(`/ip4/10.7.0.3/tcp/26656/p2p/${ID}`);
const PUBLIC = ma(`/ip4/203.0.113.7/tcp/26656/p2p/${ID}`);
const DNS = ma(`/dns4/node0.example.org/tcp/26656/p2p/${ID}`);
const ALL = [
  LOOPBACK,
  PRIVATE,
  PUBLIC,
  DNS,
  ma(`/ip6/::1/tcp/1/p2p/${ID}`),
  ma(`/ip6/fe80::1/tcp/1/p2p/${ID}`),
];

describe("local-only addresses", () => {
  it("knows loopback, unspecified and link-local from routable ones", () => {
    for (const ip of [
      "127.0.0.1",
      "127.8.9.10",
      "0.0.0.0",
      "169.254.1.1",
      "::1",
      "::",
      "fe80::1",
      "FEBF::2",
      "::ffff:127.0.0.1",
    ]) {
      assert.equal(isLocalOnlyIp(ip), true, ip);
    }
    for (const ip of [
      "10.0.0.1",
      "192.168.1.1",
      "203.0.113.7",
      "2001:db8::1",
      "::ffff:10.0.0.1",
      "not an ip",
    ]) {
      assert.equal(isLocalOnlyIp(ip), false, ip);
    }
  });
});

describe("announceFilter (identify)", () => {
  it("drops local-only addresses of a node listening on 0.0.0.0", () => {
    assert.deepEqual(texts(announceFilter([], "0.0.0.0")(ALL)), texts([PRIVATE, PUBLIC, DNS]));
    assert.deepEqual(texts(announceFilter([], "10.7.0.3")(ALL)), texts([PRIVATE, PUBLIC, DNS]));
  });

  it("keeps loopback for a node that listens on loopback (a local testnet)", () => {
    assert.deepEqual(texts(announceFilter([], "127.0.0.1")(ALL)), texts(ALL));
    assert.deepEqual(texts(announceFilter([], "localhost")(ALL)), texts(ALL));
  });

  it("passes the operator's announce addresses as libp2p gives them", () => {
    assert.deepEqual(
      texts(announceFilter(["/ip4/203.0.113.7/tcp/26656"], "0.0.0.0")([PUBLIC])),
      texts([PUBLIC]),
    );
  });
});

describe("checkAnnounceAddrs (p2p.announce)", () => {
  it("accepts IP and DNS multiaddrs", () => {
    const ok = [
      "/ip4/203.0.113.7/tcp/26656",
      "/dns4/node0.example.org/tcp/26656",
      "/ip6/2001:db8::1/tcp/26656",
    ];
    assert.deepEqual(checkAnnounceAddrs(ok), ok);
  });

  for (const [label, entry] of [
    ["not a multiaddr", "203.0.113.7:26656"],
    ["with a /p2p id", `/ip4/203.0.113.7/tcp/26656/p2p/${ID}`],
    ["unspecified IPv4", "/ip4/0.0.0.0/tcp/26656"],
    ["unspecified IPv6", "/ip6/::/tcp/26656"],
  ] as const) {
    it(`refuses one ${label}, naming it`, () => {
      assert.throws(
        () => checkAnnounceAddrs([entry]),
        (error) =>
          error instanceof P2pError &&
          error.message.includes("p2p.announce") &&
          error.reason === "invalid_argument",
      );
    });
  }
});

describe("peer exchange", () => {
  it("tells a requester on another host no local-only address", () => {
    assert.deepEqual(
      texts(addrsForRequester(ALL, ma("/ip4/10.7.0.9/tcp/40000"))),
      texts([PRIVATE, PUBLIC, DNS]),
    );
  });

  it("tells a requester on this machine everything (a local testnet)", () => {
    assert.deepEqual(texts(addrsForRequester(ALL, ma("/ip4/127.0.0.1/tcp/40000"))), texts(ALL));
  });

  it("never dials a loopback address named by a peer on another host", () => {
    assert.deepEqual(texts(dialableFrom(ALL, ma("/ip4/10.7.0.9/tcp/26656"))), texts([PRIVATE, PUBLIC, DNS]));
    assert.deepEqual(texts(dialableFrom(ALL, undefined)), texts([PRIVATE, PUBLIC, DNS]));
  });

  it("dials what a peer on this machine names", () => {
    assert.deepEqual(texts(dialableFrom(ALL, ma("/ip4/127.0.0.1/tcp/26656"))), texts(ALL));
  });
});
