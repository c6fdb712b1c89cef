# The Python package python/yolo (ctypes over libyolo.so; needs numpy):
# `cmake --install` puts it into <prefix>/${YOLO_PYTHON_INSTALL_DIR}/yolo
# with _libpath.txt naming the installed libyolo.so relative to itself, so
# the package finds the library (and through it the plugins) wherever the
# prefix is moved. The default, lib/python3/dist-packages, is Debian's
# folder for /usr (prefix /usr); for another prefix point PYTHONPATH at it
# or set YOLO_PYTHON_INSTALL_DIR (relative to the prefix, or absolute,
# e.g. the output of python3 -c "import site; print(site.getsitepackages()[0])").
# `pip install ./python` is the other way (it then finds libyolo.so through
# YOLO_LIBRARY or the system loader).
set(YOLO_PYTHON_INSTALL_DIR "lib/python3/dist-packages" CACHE STRING
    "where cmake --install puts the Python package yolo (relative to the prefix, or absolute); empty: not installed")
if(YOLO_PYTHON_INSTALL_DIR)
  install(DIRECTORY ${CMAKE_SOURCE_DIR}/python/yolo DESTINATION ${YOLO_PYTHON_INSTALL_DIR}
          COMPONENT python PATTERN "__pycache__" EXCLUDE)
  # _libpath.txt: libyolo.so relative to the package folder, worked out at install time (the prefix may be given then)
  install(CODE "
    set(pkg \"${YOLO_PYTHON_INSTALL_DIR}/yolo\")
    set(libdir \"${YOLO_INSTALL_LIBDIR}\")
    if(NOT IS_ABSOLUTE \"\${pkg}\")
      set(pkg \"\${CMAKE_INSTALL_PREFIX}/\${pkg}\")
    endif()
    if(NOT IS_ABSOLUTE \"\${libdir}\")
      set(libdir \"\${CMAKE_INSTALL_PREFIX}/\${libdir}\")
    endif()
    file(RELATIVE_PATH rel \"\${pkg}\" \"\${libdir}/libyolo.so\")
    message(STATUS \"Installing: \$ENV{DESTDIR}\${pkg}/_libpath.txt (\${rel})\")
    file(WRITE \"\$ENV{DESTDIR}\${pkg}/_libpath.txt\" \"\${rel}\\n\")
  " COMPONENT python)
endif()
