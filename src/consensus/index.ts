/**
 * consensus: how blocks are agreed and finalized. Today: single-validator production for the dev
 * chain (its own precommit is the certificate). Owns: when a block is made and its certificate.
 * Does not own: what a block does (chain) or how messages travel (p2p).
 */
export {
  type ProducerChain,
  type ProducerEvents,
  type ProducerPool,
  type SingleValidatorOptions,
  SingleValidatorProducer,
  type ValidatorKey,
} from "./singleValidator.ts";
