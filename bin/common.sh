# Shared by bin/switchml-submit and bin/switchml-switch (sourced, not run): where the built jars are, and
# building them when they are missing or older than the sources.
root="$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd -P)"
# The versions are the root pom's (<revision>, <spark.version>), written nowhere else.
pom_property() {
    sed -n "s:.*<$1>\(.*\)</$1>.*:\1:p" "$root/pom.xml" | head -1
}
version="$(pom_property revision)"
spark_version="$(pom_property spark.version)"
switchml_jar="$root/spark-switchml/target/spark-switchml-$version.jar"
examples_jar="$root/examples/target/examples.jar"
spark_dist="$root/spark-dist/target/spark-$spark_version"
stamp="$root/spark-switchml/target/.bin-built"

# Builds spark-dist, the shaded library jar and the examples (tests skipped) when any is missing or a
# source or pom changed since the last build. Maven's output is shown only when it fails. With
# SWITCHML_NO_BUILD=1 it never runs Maven (an installed copy, or a host without network such as a network
# namespace): the jars are used as they are, and a missing one is an error.
ensure_built() {
    local who="$1" newer=""
    if [[ "${SWITCHML_NO_BUILD:-}" == 1 ]]; then
        local f
        for f in "$switchml_jar" "$examples_jar" "$spark_dist/jars"; do
            if [[ ! -e "$f" ]]; then
                echo "$who: SWITCHML_NO_BUILD=1 but $f is missing: build once with" \
                    "'mvn -DskipTests -pl spark-dist,spark-switchml,examples -am package' in $root" >&2
                exit 3
            fi
        done
        return 0
    fi
    if [[ -f "$switchml_jar" && -f "$examples_jar" && -d "$spark_dist/jars" && -f "$stamp" ]]; then
        newer="$(find "$root/pom.xml" "$root/spark-dist/pom.xml" "$root/spark-switchml/pom.xml" \
                      "$root/spark-switchml/src/main" "$root/examples/pom.xml" "$root/examples/src/main" \
                      "$root/p4/switchml.p4info.txt" -newer "$stamp" -print -quit 2>/dev/null)"
        [[ -z "$newer" ]] && return 0
    fi
    echo "$who: building spark-switchml (mvn -DskipTests package; the first build downloads Spark's jars) ..." >&2
    mkdir -p "$(dirname "$stamp")" && touch "$stamp.new"
    local log
    log="$(mktemp)"
    if ! (cd "$root" && "${MVN:-mvn}" -B -ntp -DskipTests ${MVN_OPTS_EXTRA:-} \
            -pl spark-dist,spark-switchml,examples -am package) >"$log" 2>&1; then
        cat "$log" >&2
        echo "$who: build failed (output above)" >&2
        rm -f "$log"
        exit 3
    fi
    rm -f "$log"
    mv -f "$stamp.new" "$stamp"
}
