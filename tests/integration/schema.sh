#!/bin/bash
# docs/spec.schema.json: every example spec validates against it (configs/examples, each suite
# workload as the suite completes it, what quick makes, the full specs in README.md and docs/),
# it names exactly the keys the loader accepts, and what it refuses alloclab check refuses too.
. "$(dirname "$0")/lib.sh"
SOURCE=$(cd "$(dirname "$0")/../.." && pwd)
if ! python3 -c 'import jsonschema, yaml' 2>/dev/null; then
    skip_test "python3-jsonschema and python3-yaml are needed (apt-get install python3-jsonschema python3-yaml)"
fi

mkdir "$WORK/specs"
cp "$SOURCE"/configs/examples/*.yaml "$WORK/specs/"
run_alloclab 0 suite --list
for w in $(awk '{ print $1 }' <<<"$OUT"); do
    "$ALLOCLAB" suite "$w" --print-spec --threads 1,2 --allocators glibc,jemalloc >"$WORK/specs/suite-$w.yaml"
    # A workload whose program is not installed prints no spec (and says so): nothing to validate.
    [[ -s $WORK/specs/suite-$w.yaml ]] || rm "$WORK/specs/suite-$w.yaml"
done
"$ALLOCLAB" quick -a glibc,je=jemalloc -e je:MALLOC_CONF=narenas:1 --param n=1,2 --prepare true \
    --input /dev/null --print-spec -- "$WORKLOAD" vallocs '{n}' >"$WORK/specs/quick.yaml"
# The ```yaml blocks of the documentation that are whole specs.
python3 - "$WORK/specs" "$SOURCE"/README.md "$SOURCE"/docs/*.md <<'PY'
import re, sys
out, docs = sys.argv[1], sys.argv[2:]
for doc in docs:
    for i, block in enumerate(re.findall(r"```yaml\n(.*?)```", open(doc).read(), re.S)):
        if re.search(r"^experiment:", block, re.M) and re.search(r"^allocators:", block, re.M):
            name = doc.rsplit("/", 1)[1].replace(".md", "")
            open(f"{out}/doc-{name}-{i}.yaml", "w").write(block)
PY
n=$(ls "$WORK/specs" | wc -l)
[[ $n -ge 12 ]] || fail "only $n example specs found"

python3 - "$SOURCE/docs/spec.schema.json" "$SOURCE/configs/spec-load.c" "$WORK"/specs/*.yaml <<'PY' || fail "schema"
import json, re, sys, yaml, jsonschema
schema = json.load(open(sys.argv[1]))
jsonschema.Draft202012Validator.check_schema(schema)
validator = jsonschema.Draft202012Validator(schema)
for path in sys.argv[3:]:
    errors = sorted(validator.iter_errors(yaml.safe_load(open(path))), key=str)
    if errors:
        sys.exit(f"{path}: {errors[0].message} at {list(errors[0].absolute_path)}")
# The loader's field tables and the schema's properties: the same names.
source = open(sys.argv[2]).read()
def fields(table):
    block = re.search(r"static const Field %s\[\] = \{(.*?)\n\};" % table, source, re.S).group(1)
    return set(re.findall(r'\{ "([a-z_0-9]+)",', block))
variant = schema["$defs"]["variant"]["oneOf"][1]["properties"]
quiet = schema["properties"]["quiet"]["oneOf"][2]["properties"]
for table, props in (("spec_fields", schema["properties"]), ("variant_fields", variant), ("quiet_fields", quiet)):
    if fields(table) != set(props):
        sys.exit(f"{table} and the schema differ: {sorted(fields(table) ^ set(props))}")
print(f"{len(sys.argv) - 3} specs valid")
PY

# What the schema refuses, alloclab refuses too.
base='experiment: x\ncommand: [true]\nallocators: {glibc: {}}\n'
for bad in 'sampels: 3' 'order: sideways' 'probe: sometimes' 'on_failure: retry' 'env: {LD_PRELOAD: x}' \
    'verify: somefile' 'metric: "reported:"' 'cpus: [2000]' 'outliers: drop'; do
    printf "$base%s\n" "$bad" >"$WORK/bad.yaml"
    run_alloclab 3 check "$WORK/bad.yaml"
    python3 - "$SOURCE/docs/spec.schema.json" "$WORK/bad.yaml" <<'PY' || fail "the schema accepts '$bad'"
import json, sys, yaml, jsonschema
v = jsonschema.Draft202012Validator(json.load(open(sys.argv[1])))
sys.exit(0 if list(v.iter_errors(yaml.safe_load(open(sys.argv[2])))) else 1)
PY
done
