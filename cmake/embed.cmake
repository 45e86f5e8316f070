# Writes the bytes of IN as a C++ header OUT defining
#   inline constexpr unsigned char NAME[] = {...};
# (cmake -DIN=... -DOUT=... -DNAME=... -P embed.cmake). Used for the BPF
# object of the device filter (src/stepd/device_filter.bpf.c).
file(READ "${IN}" hex HEX)
string(REGEX REPLACE "([0-9a-f][0-9a-f])" "0x\\1," bytes "${hex}")
string(REGEX REPLACE "(0x..,0x..,0x..,0x..,0x..,0x..,0x..,0x..,0x..,0x..,0x..,0x..,0x..,0x..,0x..,0x..,)" "\\1\n" bytes "${bytes}")
file(WRITE "${OUT}.tmp" "// Generated from ${IN} by cmake/embed.cmake; do not edit.\n#pragma once\n\ninline constexpr unsigned char ${NAME}[] = {\n${bytes}\n};\n")
file(COPY_FILE "${OUT}.tmp" "${OUT}" ONLY_IF_DIFFERENT)
file(REMOVE "${OUT}.tmp")
