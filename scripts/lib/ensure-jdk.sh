# Sourced by scripts/demo and scripts/test-all: a fresh Debian machine has no JDK, and ./mvnw needs one.
# Installs Debian's OpenJDK 17 (the project's bytecode level) when neither $JAVA_HOME/bin/java nor java on
# PATH exists: as root directly, else it says what to install and exits 2.
ensure_jdk() {
  if [[ -n ${JAVA_HOME:-} && -x $JAVA_HOME/bin/javac ]] || command -v javac >/dev/null 2>&1; then
    return 0
  fi
  local pkg=openjdk-17-jdk-headless
  if [[ $(id -u) -ne 0 ]]; then
    echo "${0##*/}: no JDK found (javac): sudo apt-get install -y --no-install-recommends $pkg" >&2
    exit 2
  fi
  echo "${0##*/}: no JDK found: installing $pkg" >&2
  apt-get update -qq
  DEBIAN_FRONTEND=noninteractive apt-get install -y -qq --no-install-recommends "$pkg" >/dev/null
}
