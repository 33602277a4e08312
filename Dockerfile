# syntax=docker/dockerfile:1
# The rekon host: its binary on a minimal, non-root base (distroless/cc: the
# C runtime the binary links, CA certificates, a nonroot user; no shell).
# `make image-docker` builds it; `make image` builds the same image without
# a container daemon (tools/image.sh). .dockerignore keeps target/ out of
# the build context.
FROM rust:1.95-bookworm AS build
WORKDIR /src
COPY . .
RUN cargo build --release --locked -p rekon --bin rekon \
 && install -D -s target/release/rekon /out/rekon

FROM gcr.io/distroless/cc-debian12:nonroot
COPY --from=build /out/rekon /usr/local/bin/rekon
USER 65532:65532
ENTRYPOINT ["/usr/local/bin/rekon"]
CMD ["run", "--watch-configmaps", "--leader-elect", "--metrics-addr=0.0.0.0:8080", "--cache-dir=/cache"]
