# Sourced by run-sample and scripts/two-host-tests (whose class-data archives must be made with the same
# flags the VMs' JVMs start with): sets native_access to --enable-native-access=ALL-UNNAMED where the JDK
# needs it (22+: the engine's FFM downcalls) or its version is unknown, and to nothing on JDK 17-21, where
# the flag only turns CDS's optimized module handling off (the module graph built again at every start:
# 1.9 s of a sender's 5 s JVM start in a lab VM, -Xlog:startuptime). Builtins only (no java -version).
native_access=(--enable-native-access=ALL-UNNAMED)
if [[ -n ${JAVA_HOME:-} && -r $JAVA_HOME/release ]]; then
    while IFS='=' read -r key value; do
        [[ $key == JAVA_VERSION ]] || continue
        value=${value//\"/}
        [[ ${value%%.*} =~ ^[0-9]+$ ]] && ((${value%%.*} < 22)) && native_access=()
        break
    done <"$JAVA_HOME/release"
fi
