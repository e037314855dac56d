import assert from "node:assert/strict";
import { describe, it } from "node:test";
import { TX_REJECT_REASONS } from "../../../src/chain/index.ts";
import {
  createOpenRpcDocument,
  DISCOVER_METHOD,
  METHOD_LIST,
  type JsonSchema,
  OPENRPC_VERSION,
  type OpenRpcDocument,
  toJsonSchema,
} from "../../../src/rpc/index.ts";
import { ajvErrors, openRpcMetaValidator, resultValidators } from "../../helpers/openrpc.ts";

describe("OpenRPC document (rpc.discover)", () => {
  const document = createOpenRpcDocument(METHOD_LIST, "1.2.3");
  const byName = new Map(document.methods.map((m) => [m.name, m]));

  it("is valid against the OpenRPC meta-schema", () => {
    const validate = openRpcMetaValidator();
    assert.equal(validate(document), true, ajvErrors(validate));
    assert.equal(document.openrpc, OPENRPC_VERSION);
    assert.equal(document.info.version, "1.2.3");
  });

  it("the meta-schema check is not vacuous: a broken document fails it", () => {
    const validate = openRpcMetaValidator();
    const broken = structuredClone(document) as unknown as { methods: { params: unknown }[] };
    (broken.methods[0] as { params: unknown }).params = [{ schema: { type: "integer" } }]; // no name
    assert.equal(validate(broken), false);
    assert.equal(validate({ ...document, openrpc: "9.9.9" }), false);
  });

  it("lists every method of the table, in its order, rpc.discover included", () => {
    assert.deepEqual(
      document.methods.map((m) => m.name),
      METHOD_LIST.map((m) => m.name),
    );
    assert.ok(byName.has(DISCOVER_METHOD));
    assert.ok(document.methods.length > 25, `expected the whole table, got ${document.methods.length}`);
  });

  it("describes each method's params by name, with the request-validating schema and required flags", () => {
    for (const route of METHOD_LIST) {
      const method = byName.get(route.name);
      assert.ok(method, route.name);
      assert.equal(method.paramStructure, "by-name", route.name);
      const params = toJsonSchema(route.spec.params);
      const properties = (params.properties ?? {}) as Record<string, JsonSchema>;
      const required = (params.required ?? []) as string[];
      assert.deepEqual(
        method.params.map((p) => p.name),
        Object.keys(properties),
        `${route.name}: param names`,
      );
      for (const param of method.params) {
        assert.deepEqual(param.schema, properties[param.name], `${route.name}.${param.name}: schema`);
        assert.equal(param.required, required.includes(param.name), `${route.name}.${param.name}: required`);
      }
    }
    const getBlock = byName.get("chain_getBlockByNumber");
    assert.deepEqual(
      getBlock?.params.map((p) => [p.name, p.required]),
      [
        ["number", true],
        ["getFullTransactions", false],
      ],
    );
  });

  it("gives every method a result schema that compiles, taken from its definition", () => {
    const compile = resultValidators();
    for (const route of METHOD_LIST) {
      const method = byName.get(route.name);
      assert.ok(method, route.name);
      assert.deepEqual(method.result.schema, toJsonSchema(route.spec.resultSchema), route.name);
      assert.ok(Object.keys(method.result.schema).length > 0, `${route.name}: a result schema, not {}`);
      assert.doesNotThrow(() => compile(method.result.schema), route.name);
    }
  });

  it("is plain JSON: what a client receives is what was generated", () => {
    assert.deepEqual(JSON.parse(JSON.stringify(document)) as OpenRpcDocument, document);
  });

  it("lists the error codes: the common ones everywhere, rejections and limits where they apply", () => {
    const codes = (name: string) =>
      (byName.get(name)?.errors ?? []).map((e) => `${e.code}/${e.data?.reason ?? ""}`);
    for (const method of document.methods) {
      for (const common of ["-32602/invalid_params", "-32005/response_too_large", "-32603/"]) {
        assert.ok(codes(method.name).includes(common), `${method.name} lists ${common}`);
      }
    }
    for (const reason of TX_REJECT_REASONS) {
      assert.ok(codes("chain_sendSignedTransaction").includes(`-32003/${reason}`), reason);
      assert.ok(codes("chain_sendSignedTransactionBatch").includes(`-32003/${reason}`), reason);
    }
    assert.ok(codes("chain_sendSignedTransactionBatch").includes("-32600/batch_too_large"));
    assert.ok(codes("chain_getBlocks").includes("-32005/range_too_large"));
    assert.ok(!codes("chain_getBalance").includes("-32003/nonce_too_low"), "no rejections on reads");
  });
});
