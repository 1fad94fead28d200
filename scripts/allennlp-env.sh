#!/usr/bin/env bash
# Build (or reuse) a separate venv with AllenNLP 2.10.1 and run the AllenNLP parity test in it:
#   bash scripts/allennlp-env.sh [pytest args]
# AllenNLP 2.10.1 pins torch<1.13 and spacy<3.4, which have no Python 3.11 wheels, so pip cannot
# resolve it here. It is installed without its declared dependencies, next to the newer releases of
# the packages that `from allennlp.modules.elmo import Elmo` imports (found by trying that import;
# the versions below are the ones that work together). The venv lives outside the repository and is
# reused while its marker file matches this script's package list.
set -euo pipefail
cd "$(dirname "$0")/.."
VENV="${EDREW_ALLENNLP_VENV:-$HOME/.cache/edrew/allennlp-venv}"
PYTHON="${EDREW_ALLENNLP_PYTHON:-python3.11}"

TORCH=(torch==2.14.1 torchvision==0.29.1)
ALLENNLP=(allennlp==2.10.1 fairscale==0.4.6)
# import-time dependencies of allennlp.modules.elmo (and of allennlp/__init__: transformers, spacy)
IMPORT_DEPS=(
  transformers==4.40.2 tokenizers==0.19.1 huggingface-hub==0.23.5 safetensors==0.8.0
  packaging regex pyyaml requests urllib3 certifi idna charset-normalizer tqdm
  spacy==3.8.18 thinc==8.3.14 catalogue confection pydantic pydantic-core typing-inspection
  annotated-types wasabi blis cymem preshed murmurhash srsly weasel typer annotated-doc click shellingham rich
  markdown-it-py mdurl pygments cloudpathlib smart-open
  cached-path==1.1.6 boto3 botocore s3transfer jmespath python-dateutil six
  google-cloud-storage google-cloud-core google-resumable-media google-crc32c google-api-core
  google-auth googleapis-common-protos protobuf proto-plus cryptography cffi pycparser pyasn1
  pyasn1-modules rsa cachetools httpx httpcore h11 anyio sniffio
  lmdb dill base58 more-itertools h5py
)
# edrew-scrapy's own run-time dependencies that scoring imports (the package itself goes in with --no-deps):
# the HTML5 parser and the model card's schema check
EDREW_DEPS=(selectolax jsonschema jsonschema-specifications referencing rpds-py attrs)
TEST_DEPS=(pytest pluggy iniconfig)

STAMP="$VENV/.edrew-stamp"
# two runs at once (CI and a developer, say) would delete each other's half-built venv
mkdir -p "$(dirname "$VENV")"
exec 9>"$VENV.lock"
flock 9
WANT="$(printf '%s\n' "${TORCH[@]}" "${ALLENNLP[@]}" "${IMPORT_DEPS[@]}" "${EDREW_DEPS[@]}" "${TEST_DEPS[@]}" | sha256sum | cut -c1-16)"
if [ ! -f "$STAMP" ] || [ "$(cat "$STAMP")" != "$WANT" ]; then
  start=$(date +%s)
  echo "allennlp-env: building $VENV" >&2
  rm -rf "$VENV"
  mkdir -p "$(dirname "$VENV")"
  "$PYTHON" -m venv "$VENV"
  pip_q() { "$VENV/bin/pip" install -q "$@" 2>&1 | grep -v "^WARNING: Location" || true; }
  pip_q --upgrade pip
  pip_q "${TORCH[@]}"
  pip_q --no-deps "${ALLENNLP[@]}"
  pip_q --no-deps "${IMPORT_DEPS[@]}" "${EDREW_DEPS[@]}" "${TEST_DEPS[@]}"
  "$VENV/bin/python" -W ignore -c "from allennlp.modules.elmo import Elmo"
  echo "$WANT" > "$STAMP"
  echo "allennlp-env: built in $(( $(date +%s) - start )) s" >&2
fi
# our package, from this checkout, without touching the venv's pinned packages
"$VENV/bin/pip" install -q --no-deps --no-build-isolation -e . >/dev/null
"$VENV/bin/python" -m pytest -q -p no:cacheprovider -m allennlp tests/test_allennlp_parity.py "$@"
