# chain-node as a container image (docs/deployment.md, "Containers and services").
#
#   docker build -t chain-node .
#   docker run --init -v chain-node:/var/lib/chain-node -p 127.0.0.1:8545:8545 -p 26656:26656 chain-node
#
# The node needs no build step: Node 24 strips the types of src/ as it loads them
# (bin/chain-node.js). dist/ is the client library for programs that import chain-node/client; the
# node never loads it, so the image has no stage that builds it and no TypeScript compiler.
#
# Base: node:24-slim, a tag rather than a digest. 24 is the Node line the project runs and tests
# on (package.json pins node ^24 for the tests); the slim variant is Debian with glibc, which the
# prebuilt binaries of lmdb, msgpackr-extract and esbuild are built for (alpine's musl would need
# others). A tag takes Node 24's and Debian's security fixes at each rebuild; a digest would
# freeze them until someone edits this line. Pin a digest in your own build for a reproducible image.

# --- deps: production dependencies only ---------------------------------------------------------
FROM node:24-slim AS deps
WORKDIR /app
COPY package.json package-lock.json ./
# --ignore-scripts: npm ci would otherwise run this package's own `prepare` (the client build,
# `tsc`, a dev dependency absent here) and fail. `npm rebuild` then runs the dependencies' install
# scripts (lmdb and msgpackr-extract check their prebuilt binaries, esbuild its binary), and not
# `prepare`. tsx stays: it is a production dependency, the fallback bin/chain-node.js uses where Node
# cannot strip types; Node 24 can, so it is not loaded here.
RUN npm ci --omit=dev --ignore-scripts --no-audit --no-fund \
 && npm rebuild \
 && npm cache clean --force

# --- runtime --------------------------------------------------------------------------------------
FROM node:24-slim
# A user of its own with fixed ids, so that a bind-mounted home can be chowned to it from the host
# (chown -R 10001:10001 DIR).
RUN groupadd --system --gid 10001 chain-node \
 && useradd --system --uid 10001 --gid chain-node --home-dir /var/lib/chain-node --shell /usr/sbin/nologin chain-node \
 && mkdir -p /var/lib/chain-node \
 && chown chain-node:chain-node /var/lib/chain-node \
 && chmod 0700 /var/lib/chain-node
WORKDIR /app
COPY --from=deps /app/node_modules ./node_modules
# What `chain-node start` loads: the sources, the CLI entry, package.json ("type": "module", the
# version) and the entrypoint and health check scripts. Owned by root: the node cannot rewrite itself.
COPY package.json ./
COPY bin ./bin
COPY src ./src
COPY deploy/docker-entrypoint.sh deploy/healthcheck.mjs deploy/compose-setup.sh ./deploy/

# Every setting is a CHAIN_NODE_<SECTION>_<KEY> variable (docs/configuration.md); these beat the
# home's config.toml, so the ports below are the ones EXPOSEd and probed whatever the home says.
# Both listeners on 0.0.0.0: inside a container, 127.0.0.1 is reachable from nowhere else.
# Publish the RPC port on the host's loopback (-p 127.0.0.1:8545:8545) unless clients elsewhere
# need it. CHAIN_NODE_HOME is no setting: the entrypoint passes it as --home.
ENV CHAIN_NODE_HOME=/var/lib/chain-node \
    CHAIN_NODE_RPC_HOST=0.0.0.0 \
    CHAIN_NODE_RPC_PORT=8545 \
    CHAIN_NODE_P2P_HOST=0.0.0.0 \
    CHAIN_NODE_P2P_PORT=26656 \
    CHAIN_NODE_NODE_LOG_FORMAT=json
EXPOSE 8545 26656
# Keys and chain data live here, outside the image's layers; LMDB needs a real file system with
# mmap (a named volume or a bind mount, not a network file system).
VOLUME ["/var/lib/chain-node"]
USER chain-node

# /ready is 200 once the node has a peer and is not syncing. A node catching up on a long chain is
# not ready for a while: start-period covers a normal start, not a sync from genesis (docs).
HEALTHCHECK --interval=10s --timeout=5s --start-period=60s --retries=3 \
  CMD ["node", "/app/deploy/healthcheck.mjs"]
# The node stops cleanly on SIGTERM (src/cli/signals.ts). It handles the signal itself, so it
# stops even as PID 1, where the kernel gives a process no default action for SIGTERM; run with
# --init (compose: init: true) anyway, so that a SIGTERM that arrives before the handler is in
# place (during a state sync) still ends it, and children are reaped.
STOPSIGNAL SIGTERM
# Exec form: the script execs node, so the node itself receives the stop signal. docker stop waits
# 10 s by default before SIGKILL; a clean stop takes a few seconds (docs), give it
# --stop-timeout 30 (compose: stop_grace_period).
ENTRYPOINT ["/app/deploy/docker-entrypoint.sh"]
CMD ["start"]
