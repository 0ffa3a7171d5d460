# pgnfs container image: the same CMake build as the native one, in two
# stages (build on Debian 12 with the -dev packages; run on
# debian:bookworm-slim with the runtime libraries only).
#
#   docker build -t pgnfs .                      (add --network host where
#                                                 the engine has no bridge)
#   docker run --rm pgnfs pgnfs --help
#
# The server runs as the unprivileged user "pgnfs". Ports 2049 and 111 are
# privileged: instead of running as root, the two binaries carry the file
# capability CAP_NET_BIND_SERVICE (setcap below), which Docker's default
# capability set allows; nothing else is granted. An engine that drops
# NET_BIND_SERVICE (cap_drop: ALL) needs ports >= 1024 ([server] port,
# portmap_port) or `user: root`.
#
# Configuration: /etc/pgnfs/pgnfs.conf (docker/pgnfs.conf; mount your own)
# and PGNFS_<GROUP>_<KEY> environment variables (see docker-compose.yml).
FROM debian:bookworm-slim AS build
RUN apt-get update \
 && DEBIAN_FRONTEND=noninteractive apt-get install -y --no-install-recommends \
      build-essential cmake ninja-build pkg-config \
      libpq-dev libtirpc-dev rpcsvc-proto libglib2.0-dev libssl-dev libmicrohttpd-dev \
      libzstd-dev liblz4-dev \
 && rm -rf /var/lib/apt/lists/*
WORKDIR /src
COPY . .
# libnfs is not installed here, so CMake leaves tests and benchmarks out.
RUN cmake -S . -B /build -G Ninja -DCMAKE_BUILD_TYPE=RelWithDebInfo -DCMAKE_INSTALL_PREFIX=/usr/local \
 && cmake --build /build --target pgnfs pgnfsd \
 && cmake --install /build --strip

FROM debian:bookworm-slim
RUN apt-get update \
 && DEBIAN_FRONTEND=noninteractive apt-get install -y --no-install-recommends \
      libpq5 libtirpc3 libglib2.0-0 libssl3 libmicrohttpd12 libzstd1 liblz4-1 \
      postgresql-client-15 libcap2-bin \
 && rm -rf /var/lib/apt/lists/*
COPY --from=build /usr/local/bin/pgnfs /usr/local/bin/pgnfsd /usr/local/bin/
COPY docker/entrypoint.sh /usr/local/bin/pgnfs-entrypoint
COPY docker/pgnfs.conf /etc/pgnfs/pgnfs.conf
RUN setcap cap_net_bind_service=+ep /usr/local/bin/pgnfs \
 && setcap cap_net_bind_service=+ep /usr/local/bin/pgnfsd \
 && chmod 755 /usr/local/bin/pgnfs-entrypoint \
 && useradd --system --home-dir /var/lib/pgnfs --create-home --shell /usr/sbin/nologin pgnfs
USER pgnfs
WORKDIR /var/lib/pgnfs
# NFS and MOUNT (TCP and UDP), the portmapper, the metrics endpoint.
EXPOSE 2049/tcp 2049/udp 111/tcp 111/udp 9466/tcp
ENTRYPOINT ["pgnfs-entrypoint"]
CMD ["serve"]
