inline float lib_f(float x) { return x; }
