// SS_MULTIVERSION: one copy of a function per x86-64 ISA level (target_clones), the loader picking
// one at start-up, so a loop vectorizes for the machine it runs on while the binary runs on any
// x86-64 (no -march=native). Off under the sanitizers, whose builds do not need the clones. For
// hot loops over floats: model/kernels.cpp, optim/optimizers.cpp (both compiled so that -O2
// vectorizes them; see their sources.cmake).
#pragma once

#if defined(__x86_64__) && !defined(__SANITIZE_ADDRESS__) && !defined(__SANITIZE_THREAD__)
#define SS_MULTIVERSION __attribute__((target_clones("arch=x86-64-v4", "arch=x86-64-v3", "default")))
#else
#define SS_MULTIVERSION
#endif
