# Script mode (cmake -DEXE=... -DOUT=... -P write_completion.cmake): the bash
# completion script as the built program prints it (`attn-run --completion bash`).
execute_process(COMMAND "${EXE}" --completion bash OUTPUT_FILE "${OUT}" RESULT_VARIABLE rc)
if(NOT rc EQUAL 0)
  file(REMOVE "${OUT}")
  message(FATAL_ERROR "${EXE} --completion bash failed: ${rc}")
endif()
