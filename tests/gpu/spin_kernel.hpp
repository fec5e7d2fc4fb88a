// Queues a one-thread kernel that busy-waits `cycles` GPU clock cycles on `stream`
// (a cudaStream_t): stand-in compute that keeps the GPU busy without using memory.
#pragma once

void stoker_spin(long long cycles, void* stream);

// Milliseconds one stoker_spin(cycles) takes on `stream` (timed with events, after a
// warm-up), and the cycles that take about `ms` there.
double stoker_spin_ms(long long cycles, void* stream);
long long stoker_spin_cycles_for(double ms, void* stream);
