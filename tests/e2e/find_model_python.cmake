# Sets TESSEL_MODEL_PYTHON to a python3 that has the onnx and numpy modules, which
# scripts/gen_models.py needs (Debian's python3-onnx / python3-numpy; an interpreter from pyenv
# or a venv earlier on the PATH may not see them). Empty when there is none.
set(TESSEL_MODEL_PYTHON "" CACHE FILEPATH "python3 with the onnx and numpy modules, for scripts/gen_models.py")
if(NOT TESSEL_MODEL_PYTHON)
  find_program(_tessel_python3 NAMES python3)
  foreach(candidate /usr/bin/python3 ${_tessel_python3})
    execute_process(COMMAND ${candidate} -c "import onnx, numpy" RESULT_VARIABLE _rc OUTPUT_QUIET ERROR_QUIET)
    if(_rc EQUAL 0)
      set(TESSEL_MODEL_PYTHON ${candidate} CACHE FILEPATH "python3 with the onnx and numpy modules" FORCE)
      break()
    endif()
  endforeach()
endif()
