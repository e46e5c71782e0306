#!/usr/bin/env bash
# Runs maxsim4j-spark's job jar through spark-submit as a user would, without a Spark distribution:
#   1. builds the job jar and assembles SPARK_HOME/jars from the spark module's Maven class path (provided scope:
#      Spark, Scala, Hadoop's client and the rest of what a distribution's jars/ holds; not maxsim4j, not JUnit)
#   2. writes a query table and a corpus (SubmitCheck data) through spark-submit
#   3. runs TopKJob --queries q.parquet --corpus corpus/ --k K --out run/ with (a) --master local[2] and
#      (b) a standalone master and worker on 127.0.0.1, two executors of one core each
#   4. checks run.trec and topk/ of both against one single-process MaxSim.topK call (SubmitCheck compare), and
#      that a repeated run (exit 1) and a bad option (exit 2) end as one line through spark-submit as well
# Every java command line is built by Spark's own launcher (org.apache.spark.launcher.Main, what bin/spark-class
# runs), so the JVM flags, class path and memory settings are a distribution's; the environment is what
# bin/load-spark-env.sh exports there (SPARK_HOME, SPARK_SCALA_VERSION), plus SPARK_LOCAL_IP=127.0.0.1.
# usage: scripts/spark-submit-check.sh [--work DIR] [--docs N] [--queries N] [--k K]
set -euo pipefail
root=$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)
work=/tmp/maxsim4j-spark-submit docs=20000 queries=16 k=100
while [[ $# -gt 0 ]]; do
  case $1 in
    --work) work=$2; shift 2 ;;
    --docs) docs=$2; shift 2 ;;
    --queries) queries=$2; shift 2 ;;
    --k) k=$2; shift 2 ;;
    *) echo "spark-submit-check.sh: unknown option '$1'; expected --work DIR, --docs N, --queries N, or --k K" >&2
       exit 2 ;;
  esac
done
export JAVA_HOME=${JAVA_HOME:-/usr/lib/jvm/temurin-25-jdk-amd64}
java=$JAVA_HOME/bin/java
version=$(sed -n 's:^  <version>\(.*\)</version>$:\1:p' "$root/pom.xml" | head -1)
job=$root/maxsim4j-spark/target/maxsim4j-spark-$version-job.jar

rm -rf "$work"
mkdir -p "$work/spark-home/jars" "$work/logs"
export SPARK_HOME=$work/spark-home SPARK_SCALA_VERSION=2.13 SPARK_LOCAL_IP=127.0.0.1

step() { printf '== %s\n' "$*"; }

step "building the job jar and Spark's class path (mvn package dependency:build-classpath)"
(cd "$root" && MAVEN_OPTS="--sun-misc-unsafe-memory-access=allow" mvn -B -ntp -q -o -Dmaven.javadoc.skip=true \
  -Dmaxsim4j.cuda.skip=true -pl maxsim4j-spark -am -DskipTests package dependency:build-classpath \
  -DincludeScope=provided -Dmdep.outputFile="$work/spark-classpath.txt")
tr ':' '\n' < "$work/spark-classpath.txt" | while read -r jar; do ln -s "$jar" "$SPARK_HOME/jars/"; done
# the checker's classes, a jar of its own beside the job jar
(cd "$root/maxsim4j-spark/target/test-classes" && "$JAVA_HOME/bin/jar" cf "$work/check.jar" \
  dev/maxsim4j/spark/SubmitCheck*.class)
echo "SPARK_HOME=$SPARK_HOME: $(ls "$SPARK_HOME/jars" | wc -l) jars; job jar $(basename "$job")"

# bin/spark-class: the launcher prints its messages, a NUL and a newline, then the java command's arguments
# each ended by a NUL; the shell is replaced by that command (exec), so run it in a subshell or in the
# background, where $! is then the JVM's own process id
spark_class() {
  local parts=() cmd=() file="$work/command.$BASHPID"
  "$java" -Xmx128m -cp "$SPARK_HOME/jars/*" org.apache.spark.launcher.Main "$@" > "$file"
  mapfile -d '' parts < "$file"
  [[ -z ${parts[0]} ]] || printf '%s' "${parts[0]}"
  cmd=("${parts[@]:1}")
  cmd[0]=${cmd[0]#$'\n'}
  exec "${cmd[@]}"
}
spark_submit() { (spark_class org.apache.spark.deploy.SparkSubmit "$@"); }

# runs spark-submit, its output in logs/NAME.log; fails the script unless it exits with STATUS
submit() {
  local name=$1 status=$2 got=0
  shift 2
  spark_submit "$@" > "$work/logs/$name.log" 2>&1 || got=$?
  if [[ $got != "$status" ]]; then
    echo "spark-submit-check.sh: $name exited with $got; expected $status. Last lines of logs/$name.log:" >&2
    tail -20 "$work/logs/$name.log" >&2
    exit 1
  fi
}

step "data: $queries queries, $docs documents (spark-submit --master local[2])"
submit data 0 --master 'local[2]' --driver-memory 2g --class dev.maxsim4j.spark.SubmitCheck --jars "$job" \
  "$work/check.jar" data "$work" "$docs" "$queries" 4
grep '^data:' "$work/logs/data.log"

job_args=(--queries "$work/q.parquet" --corpus "$work/corpus/" --k "$k")
check() {
  submit "compare-$1" 0 --master 'local[2]' --driver-memory 2g --class dev.maxsim4j.spark.SubmitCheck \
    --jars "$job" "$work/check.jar" compare "$work" "$work/$1" "$k"
  grep -E '^(compare|  )' "$work/logs/compare-$1.log"
}

step "(a) spark-submit --master local[2] $(basename "$job") ${job_args[*]} --out run-local/"
start=$SECONDS
submit run-local 0 --master 'local[2]' "$job" "${job_args[@]}" --out "$work/run-local/"
echo "exit 0 after $((SECONDS - start)) s"
check run-local

step "(a) the same run again (its output exists: exit 1, one line) and a bad option (exit 2)"
# stderr's last line; fails the script unless it is the job's one line
last_line() {
  local line
  line=$(tail -1 "$work/logs/$1.log")
  echo "$line"
  if [[ $line != "maxsim4j-spark: "* ]]; then
    echo "spark-submit-check.sh: the last line of logs/$1.log is not the job's" >&2
    exit 1
  fi
}
submit again 1 --master 'local[2]' "$job" "${job_args[@]}" --out "$work/run-local/"
last_line again
submit usage 2 --master 'local[2]' "$job" "${job_args[@]}" --out
last_line usage
if grep -q SparkContext "$work/logs/usage.log"; then
  echo "spark-submit-check.sh: Spark was started for a bad command line (logs/usage.log)" >&2
  exit 1
fi

free_port() {
  local p
  for p in $(shuf -i 20000-60000 -n 50); do
    if ! (exec 3<>"/dev/tcp/127.0.0.1/$p") 2>/dev/null; then
      echo "$p"
      return
    fi
  done
  echo "spark-submit-check.sh: no free port found" >&2
  exit 1
}
pids=()
stop_cluster() {
  local p
  for p in "${pids[@]}"; do
    kill "$p" 2>/dev/null || true
  done
  for p in "${pids[@]}"; do
    wait "$p" 2>/dev/null || true
  done
}
trap stop_cluster EXIT
wait_for() { # waits up to 60 s for PATTERN in FILE
  local i
  for i in $(seq 120); do
    grep -q "$1" "$2" 2>/dev/null && return
    sleep 0.5
  done
  echo "spark-submit-check.sh: '$1' did not appear in $2 within 60 s" >&2
  tail -20 "$2" >&2
  exit 1
}

port=$(free_port)
master=spark://127.0.0.1:$port
step "(b) standalone master $master and one worker (2 cores, 3 GiB) on 127.0.0.1"
spark_class org.apache.spark.deploy.master.Master --host 127.0.0.1 --port "$port" --webui-port 0 \
  > "$work/logs/master.log" 2>&1 &
pids+=($!)
wait_for "I have been elected leader" "$work/logs/master.log"
spark_class org.apache.spark.deploy.worker.Worker --host 127.0.0.1 --cores 2 --memory 3g --webui-port 0 \
  --work-dir "$work/worker" "$master" > "$work/logs/worker.log" 2>&1 &
pids+=($!)
wait_for "Successfully registered with master" "$work/logs/worker.log"

step "(b) spark-submit --master $master --executor-cores 1 --executor-memory 1g $(basename "$job") ${job_args[*]}" \
  "--out run-cluster/"
start=$SECONDS
submit run-cluster 0 --master "$master" --executor-cores 1 --executor-memory 1g "$job" "${job_args[@]}" \
  --out "$work/run-cluster/"
echo "exit 0 after $((SECONDS - start)) s"
executors=$(ls -d "$work"/worker/app-*/* | wc -l)
tasks=$(cat "$work"/worker/app-*/*/stderr | grep -c 'Running task' || true)
echo "executor JVMs started by the worker: $executors; tasks they ran: $tasks"
if [[ $executors != 2 || $tasks == 0 ]]; then
  echo "spark-submit-check.sh: expected 2 executor JVMs that ran tasks" >&2
  exit 1
fi
check run-cluster

step "both runs equal one MaxSim.topK call; logs in $work/logs"
