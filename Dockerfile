# syntax=docker/dockerfile:1
# The rekon host: a static-ish binary on a minimal, non-root base.
FROM rust:1.95-bookworm AS build
WORKDIR /src
COPY . .
RUN cargo build --release --locked -p rekon-host --bin rekon \
 && install -D target/release/rekon /out/rekon

FROM gcr.io/distroless/cc-debian12:nonroot
COPY --from=build /out/rekon /usr/local/bin/rekon
USER 65532:65532
ENTRYPOINT ["/usr/local/bin/rekon"]
CMD ["run", "--modules=/modules", "--leader-elect", "--metrics-addr=0.0.0.0:8080", "--cache-dir=/cache"]
