// Queues a one-thread kernel that busy-waits `cycles` GPU clock cycles on `stream`
// (a cudaStream_t): stand-in compute that keeps the GPU busy without using memory.
#pragma once

void stoker_spin(long long cycles, void* stream);
