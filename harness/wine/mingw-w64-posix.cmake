# CMake toolchain: Windows x86-64 programs cross-built with Debian's mingw-w64, run under Wine.
# The -posix compilers: the default win32 thread model has no std::mutex, which gtest-port.h needs.
# Static libgcc/libstdc++/winpthread, so the .exe needs no mingw DLLs in the Wine prefix.
set(CMAKE_SYSTEM_NAME Windows)
set(CMAKE_SYSTEM_PROCESSOR x86_64)
set(CMAKE_C_COMPILER x86_64-w64-mingw32-gcc-posix)
set(CMAKE_CXX_COMPILER x86_64-w64-mingw32-g++-posix)
set(CMAKE_RC_COMPILER x86_64-w64-mingw32-windres)
set(CMAKE_FIND_ROOT_PATH /usr/x86_64-w64-mingw32)
set(CMAKE_FIND_ROOT_PATH_MODE_PROGRAM NEVER)
set(CMAKE_FIND_ROOT_PATH_MODE_LIBRARY ONLY)
set(CMAKE_FIND_ROOT_PATH_MODE_INCLUDE ONLY)
# Packages (the cross-built GoogleTest) may also come from CMAKE_PREFIX_PATH outside the root.
set(CMAKE_FIND_ROOT_PATH_MODE_PACKAGE BOTH)
set(CMAKE_EXE_LINKER_FLAGS_INIT "-static -static-libgcc -static-libstdc++")
# CTest and gtest_discover_tests run the .exe through this. The caller sets WINEPREFIX & co (harness/wine/cell.sh).
set(CMAKE_CROSSCOMPILING_EMULATOR wine)
