# Turns a source file into a C++ translation unit defining `const char* SYMBOL`.
file(READ ${INPUT} content)
set(delim "sf_embed__")
file(WRITE ${OUTPUT} "// Generated from ${INPUT}; do not edit.\nnamespace spikeforge::embedded {\nextern const char* const ${SYMBOL};\nconst char* const ${SYMBOL} = R\"${delim}(${content})${delim}\";\n}\n")
