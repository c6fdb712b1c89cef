# cmake -DSPV=in.spv -DOUT=out.h -DNAME=name -P spv_to_c.cmake
# Writes the SPIR-V module as `static const uint32_t yolo_spv_<name>[]`
# (the file is little-endian words, as SPIR-V from glslang on any host).
file(READ ${SPV} hex HEX)
string(LENGTH "${hex}" len)
math(EXPR rem "${len} % 8")
if(NOT rem EQUAL 0 OR len EQUAL 0)
  message(FATAL_ERROR "${SPV}: not a SPIR-V module (size is not a multiple of 4 bytes)")
endif()
string(REGEX REPLACE "([0-9a-f][0-9a-f])([0-9a-f][0-9a-f])([0-9a-f][0-9a-f])([0-9a-f][0-9a-f])"
       "0x\\4\\3\\2\\1u," words "${hex}")
string(REGEX REPLACE "(([^,]*,){8})" "\\1\n" words "${words}")
file(WRITE ${OUT} "/* generated from ${NAME}.comp by cmake/spv_to_c.cmake */\nstatic const uint32_t yolo_spv_${NAME}[] = {\n${words}\n};\n")
