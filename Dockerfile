# syntax=docker/dockerfile:1
# Build stage: Debian 12 with the project's toolchain and libraries.
FROM debian:12 AS build
RUN apt-get update -q && DEBIAN_FRONTEND=noninteractive apt-get install -y -q --no-install-recommends \
      build-essential cmake ninja-build libboost1.81-dev libboost-json1.81-dev \
      libboost-program-options1.81-dev libboost-filesystem1.81-dev libssl-dev libyaml-cpp-dev \
      libspdlog-dev libfmt-dev \
    && rm -rf /var/lib/apt/lists/*
WORKDIR /src
COPY . .
RUN cmake -S . -B /build -G Ninja -DCMAKE_BUILD_TYPE=Release -DCTXGUARD_BUILD_TESTS=OFF \
      -DCTXGUARD_WERROR=ON \
    && cmake --build /build \
    && cmake --install /build --prefix /opt/ctxguard

# Runtime stage: the binary and the shared libraries it links, plus Node.js so `npx` servers run.
FROM debian:12-slim
RUN apt-get update -q && DEBIAN_FRONTEND=noninteractive apt-get install -y -q --no-install-recommends \
      libboost-json1.81.0 libboost-program-options1.81.0 libspdlog1.10 libfmt9 libyaml-cpp0.7 \
      libssl3 nodejs npm ca-certificates \
    && rm -rf /var/lib/apt/lists/*
COPY --from=build /opt/ctxguard/ /usr/local/
ENTRYPOINT ["ctxguard"]
CMD ["--help"]
