# Checkpoint tests beyond the plain test_ckpt_* executables: the Python
# reader test and the checkpoint fuzz target (fuzz/ckpt_fuzz.c).
target_link_libraries(test_ckpt_file PRIVATE PkgConfig::ARCHIVE)

# ---- Python reads a checkpoint: zipfile + json (or safetensors), PyYAML if present.
set(YOLO_CKPT_PY_SCRIPT ${CMAKE_CURRENT_BINARY_DIR}/ckpt_check.py)
file(WRITE ${YOLO_CKPT_PY_SCRIPT} [==[
"""Reads a yolo checkpoint the way Python tooling would (tests/ckpt.cmake)."""
import json, math, struct, sys, zipfile, zlib

ckpt_path, manifest_path = sys.argv[1], sys.argv[2]
expected = json.load(open(manifest_path, encoding="utf-8"))
SIZES = {"BOOL": 1, "U8": 1, "I8": 1, "I16": 2, "U16": 2, "F16": 2, "BF16": 2, "I32": 4, "U32": 4,
         "F32": 4, "F64": 8, "I64": 8, "U64": 8}
UNPACK = {"F32": "<f", "F16": "<e", "F64": "<d", "I32": "<i", "I64": "<q", "U8": "<B"}

def fail(msg):
    print("FAIL: " + msg)
    sys.exit(1)

with zipfile.ZipFile(ckpt_path) as z:
    bad = z.testzip()
    if bad is not None:
        fail("zip CRC error in " + bad)
    names = z.namelist()
    if "meta.yaml" not in names:
        fail("no meta.yaml in " + str(names))
    blobs = {name: z.read(name) for name in names if name.endswith(".safetensors")}
    meta_text = z.read("meta.yaml").decode("utf-8")

if set(blobs) != set(expected["blobs"]):
    fail("members %s, expected %s" % (sorted(blobs), sorted(expected["blobs"])))

try:
    import safetensors  # noqa: F401
    from safetensors import deserialize as st_deserialize
except Exception:
    st_deserialize = None

for member, tensors in expected["blobs"].items():
    raw = blobs[member]
    (n,) = struct.unpack("<Q", raw[:8])
    if n % 8:
        fail("%s: header length %d is not a multiple of 8" % (member, n))
    header = json.loads(raw[8:8 + n].decode("utf-8"))
    header.pop("__metadata__", None)
    if set(header) != set(tensors):
        fail("%s: tensors %s, expected %s" % (member, sorted(header), sorted(tensors)))
    data = raw[8 + n:]
    spans = []
    for name, (dtype, shape, first) in tensors.items():
        info = header[name]
        if info["dtype"] != dtype or info["shape"] != shape:
            fail("%s: %s is %s%s, expected %s%s" % (member, name, info["dtype"], info["shape"], dtype, shape))
        begin, end = info["data_offsets"]
        numel = 1
        for d in shape:
            numel *= d
        if end - begin != numel * SIZES[dtype]:
            fail("%s: %s spans %d bytes" % (member, name, end - begin))
        if begin % SIZES[dtype]:
            fail("%s: %s is not aligned" % (member, name))
        spans.append((begin, end))
        if first is not None:
            (value,) = struct.unpack_from(UNPACK[dtype], data, begin)
            if isinstance(first, float) or dtype.startswith("F"):
                if not math.isclose(value, first, rel_tol=1e-6, abs_tol=1e-30):
                    fail("%s: %s[0] = %r, expected %r" % (member, name, value, first))
            elif value != first:
                fail("%s: %s[0] = %r, expected %r" % (member, name, value, first))
    spans.sort()
    pos = 0
    for begin, end in spans:
        if begin != pos:
            fail("%s: offsets do not tile the data" % member)
        pos = end
    if pos != len(data):
        fail("%s: %d data bytes, tensors cover %d" % (member, len(data), pos))
    if st_deserialize is not None:
        got = {name: (info["dtype"].upper(), list(info["shape"])) for name, info in st_deserialize(raw)}
        for name, (dtype, shape, _) in tensors.items():
            if got.get(name, (None, None))[0] not in (dtype, {"F32": "FLOAT32", "F16": "FLOAT16"}.get(dtype)) \
                    or got[name][1] != shape:
                fail("safetensors package: %s: %s is %s" % (member, name, got.get(name)))

try:
    import yaml
except ImportError:
    yaml = None
if yaml is not None:
    meta = yaml.safe_load(meta_text)
    for key, want in expected["meta"].items():
        got = meta.get(key)
        if type(got) is not type(want) or got != want:
            fail("meta.yaml: %s = %r (%s), expected %r (%s)" % (key, got, type(got).__name__, want, type(want).__name__))
    for member, raw in blobs.items():
        entry = meta["members"][member]
        if entry["size"] != len(raw) or int(entry["crc32"], 16) != zlib.crc32(raw):
            fail("meta.yaml: members.%s does not describe the blob" % member)
    if not isinstance(meta["train_args"], dict) or not isinstance(meta["results"], list):
        fail("meta.yaml: train_args / results")
else:
    for key, want in expected["meta"].items():
        if isinstance(want, int) and ("\n%s: %d\n" % (key, want)) not in "\n" + meta_text:
            fail("meta.yaml lacks %s: %d" % (key, want))

print("python read %s: %d blobs, %d tensors (%s, %s)" % (
    ckpt_path, len(blobs), sum(len(t) for t in expected["blobs"].values()),
    "safetensors package" if st_deserialize else "json headers", "PyYAML" if yaml else "no PyYAML"))
]==])
find_package(Python3 COMPONENTS Interpreter)
if(Python3_Interpreter_FOUND)
  set(ckpt_py_out ${CMAKE_CURRENT_BINARY_DIR}/ckpt_python)
  file(MAKE_DIRECTORY ${ckpt_py_out})
  add_test(NAME ckpt_python_reader
    COMMAND sh -c "\"$1\" --write \"$2/py.ckpt\" \"$2/py.json\" && \"$4\" \"$3\" \"$2/py.ckpt\" \"$2/py.json\""
            ckpt_python_reader $<TARGET_FILE:test_ckpt_python> ${ckpt_py_out} ${YOLO_CKPT_PY_SCRIPT} ${Python3_EXECUTABLE})
  set_tests_properties(ckpt_python_reader PROPERTIES TIMEOUT 60)
endif()

# ---- Fuzzing the checkpoint reader.
# ckpt_fuzz_driver: a plain program (any compiler) that mutates seed
# checkpoints, safetensors blobs, meta.yaml and JSON for a given time, or
# replays files; under -DYOLO_SANITIZE=ON it runs with ASan/UBSan.
#   ckpt_fuzz_driver -seconds 20 [-seed N] [corpus files or folders]
#   ckpt_fuzz_driver -write-seeds DIR
set(YOLO_CKPT_FUZZ_SRC ${CMAKE_SOURCE_DIR}/fuzz/ckpt_fuzz.c)
add_executable(ckpt_fuzz_driver ${YOLO_CKPT_FUZZ_SRC} ${CMAKE_SOURCE_DIR}/fuzz/fuzz_mutate.c)
target_link_libraries(ckpt_fuzz_driver PRIVATE PkgConfig::ARCHIVE)
yolo_link_core(ckpt_fuzz_driver)
set(YOLO_CKPT_FUZZ_SECONDS 8 CACHE STRING "seconds the ctest fuzz run of the checkpoint reader lasts")
add_test(NAME ckpt_fuzz_driver COMMAND ckpt_fuzz_driver -seconds ${YOLO_CKPT_FUZZ_SECONDS})
set_tests_properties(ckpt_fuzz_driver PROPERTIES TIMEOUT 120)

# ckpt_fuzz: the libFuzzer target (clang only). The checkpoint sources are
# compiled into it with coverage instrumentation, outside libyolo.
include(${CMAKE_SOURCE_DIR}/cmake/libfuzzer.cmake)
if(YOLO_HAVE_LIBFUZZER)
  file(GLOB ckpt_fuzz_sources ${CMAKE_SOURCE_DIR}/core/ckpt/*.c)
  list(FILTER ckpt_fuzz_sources EXCLUDE REGEX ".*/ckpt_tensors\\.c$")
  add_executable(ckpt_fuzz ${YOLO_CKPT_FUZZ_SRC} ${ckpt_fuzz_sources} ${CMAKE_SOURCE_DIR}/core/util/error.c)
  target_compile_definitions(ckpt_fuzz PRIVATE YOLO_LIBFUZZER YOLO_VERSION="${PROJECT_VERSION}")
  target_include_directories(ckpt_fuzz PRIVATE ${CMAKE_SOURCE_DIR}/core ${CMAKE_SOURCE_DIR}/sdk/include)
  target_compile_options(ckpt_fuzz PRIVATE -fsanitize=fuzzer,address,undefined -g)
  target_link_options(ckpt_fuzz PRIVATE -fsanitize=fuzzer,address,undefined)
  target_link_libraries(ckpt_fuzz PRIVATE PkgConfig::ARCHIVE PkgConfig::YAML Threads::Threads m yolo_build_flags)
  set(ckpt_corpus ${CMAKE_CURRENT_BINARY_DIR}/ckpt_fuzz_corpus)
  add_test(NAME ckpt_fuzz_libfuzzer
    COMMAND sh -c "\"$1\" -write-seeds \"$3\" && \"$2\" -max_total_time=${YOLO_CKPT_FUZZ_SECONDS} -rss_limit_mb=2048 \"$3\""
            ckpt_fuzz $<TARGET_FILE:ckpt_fuzz_driver> $<TARGET_FILE:ckpt_fuzz> ${ckpt_corpus})
  set_tests_properties(ckpt_fuzz_libfuzzer PROPERTIES TIMEOUT 120)
endif()
