# Sourced on a GPU machine without network, from the repository's root: the engine's C libraries
# from the Debian packages carried in .deps (experiments/README.md), unpacked into /tmp/deps, and
# the compiler's, linker's and loader's paths to them.
deps=/tmp/deps lib=/tmp/deps/usr/lib/x86_64-linux-gnu
for f in .deps/*.deb; do dpkg -x "$f" "$deps"; done
export CMAKE_PREFIX_PATH=$deps/usr CPATH=$deps/usr/include LIBRARY_PATH=$lib:$lib/openblas-pthread
export LD_LIBRARY_PATH=$lib:$lib/openblas-pthread${LD_LIBRARY_PATH:+:$LD_LIBRARY_PATH}
