# cmake -DINPUT=file -DOUTPUT=file.cpp -DNAME=symbol -P embed_file.cmake
# writes a C++ source defining `extern const unsigned char NAME[]` with the
# file's bytes and `extern const std::size_t NAME_size`.
file(READ "${INPUT}" hex HEX)
string(LENGTH "${hex}" n)
math(EXPR bytes "${n} / 2")
string(REGEX REPLACE "([0-9a-f][0-9a-f])" "0x\\1," body "${hex}")
file(WRITE "${OUTPUT}" "// Generated from ${INPUT} by cmake/embed_file.cmake.\n#include <cstddef>\n"
     "extern const unsigned char ${NAME}[] = {${body}};\nextern const std::size_t ${NAME}_size = ${bytes};\n")
