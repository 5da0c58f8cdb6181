# Third-party libraries, all from Debian packages (scripts/setup.sh installs them). Each is looked
# up only by the part of the build that uses it, so that smd.pc and the CMake package name exactly
# what libsmd needs:
#   smd_impl (libsmd)   pcre2-8 (regex), cJSON (index, collections, hook configuration), threads,
#                       libcurl (S3 transport) and libcrypto (SHA-256/HMAC for SigV4)
#   protoc-c and libprotobuf-c: the generated event codec (impl/format/proto), used by the tests,
#                       the fuzzers and the codec benchmark as an independent decoder
#   smd tool            libcrypto (digests in --json output)
find_package(PkgConfig REQUIRED)
find_package(Threads REQUIRED)
pkg_check_modules(PCRE2 REQUIRED IMPORTED_TARGET libpcre2-8)
pkg_check_modules(CJSON REQUIRED IMPORTED_TARGET libcjson)
pkg_check_modules(CURL REQUIRED IMPORTED_TARGET libcurl)
find_package(OpenSSL REQUIRED COMPONENTS Crypto)
if(SMD_BUILD_TESTS OR SMD_BUILD_BENCH OR SMD_BUILD_FUZZ)
  pkg_check_modules(PROTOBUFC REQUIRED IMPORTED_TARGET libprotobuf-c)
  find_program(PROTOC_C NAMES protoc-c REQUIRED)
endif()
