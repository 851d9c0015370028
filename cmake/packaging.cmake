# Installed like a Debian tool: the man page, the bash completion
# generated from the options, the example configs and data, and a .deb by
# `cpack -G DEB` in the build folder. The executable's, library's and headers'
# install rules live in cmake/install.cmake when present.
include(GNUInstallDirs)

if(NOT EXISTS ${CMAKE_CURRENT_LIST_DIR}/install.cmake)
  install(TARGETS attn-run RUNTIME DESTINATION ${CMAKE_INSTALL_BINDIR})
  install(TARGETS attn-run-cairo LIBRARY DESTINATION ${ATTN_PLOT_MODULE_DIR})
endif()

# The completion script, written by the program itself so it lists every flag.
set(ATTN_COMPLETION ${PROJECT_BINARY_DIR}/attn-run.bash-completion)
add_custom_command(
  OUTPUT ${ATTN_COMPLETION}
  COMMAND ${CMAKE_COMMAND} -DEXE=$<TARGET_FILE:attn-run> -DOUT=${ATTN_COMPLETION}
          -P ${CMAKE_CURRENT_LIST_DIR}/write_completion.cmake
  DEPENDS attn-run ${CMAKE_CURRENT_LIST_DIR}/write_completion.cmake
  COMMENT "Generating the bash completion (attn-run --completion bash)")
add_custom_target(attn-run-completion ALL DEPENDS ${ATTN_COMPLETION})
install(FILES ${ATTN_COMPLETION} DESTINATION ${CMAKE_INSTALL_DATADIR}/bash-completion/completions
        RENAME attn-run)

# Debian installs man pages gzipped (policy 12.1); -n keeps the archive reproducible.
find_program(ATTN_GZIP gzip)
set(ATTN_MAN ${PROJECT_SOURCE_DIR}/docs/attn-run.1)
if(ATTN_GZIP)
  add_custom_command(OUTPUT ${PROJECT_BINARY_DIR}/attn-run.1.gz
                     COMMAND ${ATTN_GZIP} -9 -n -c ${ATTN_MAN} > ${PROJECT_BINARY_DIR}/attn-run.1.gz
                     DEPENDS ${ATTN_MAN})
  add_custom_target(attn-run-man ALL DEPENDS ${PROJECT_BINARY_DIR}/attn-run.1.gz)
  set(ATTN_MAN ${PROJECT_BINARY_DIR}/attn-run.1.gz)
endif()
install(FILES ${ATTN_MAN} DESTINATION ${CMAKE_INSTALL_MANDIR}/man1)

# The shipped examples: configs refer to ../data, so both keep their folders.
install(DIRECTORY ${PROJECT_SOURCE_DIR}/configs ${PROJECT_SOURCE_DIR}/data
        DESTINATION ${CMAKE_INSTALL_DATADIR}/attn-run/examples)
install(DIRECTORY ${PROJECT_SOURCE_DIR}/docs/list_example
        DESTINATION ${CMAKE_INSTALL_DATADIR}/attn-run/examples)

# cpack -G DEB: package attn-run. Configure with -DATTN_NATIVE=OFF for a
# package meant for other machines (-march=native ties it to this CPU).
set(CPACK_PACKAGE_NAME attn-run)
set(CPACK_PACKAGE_VERSION ${PROJECT_VERSION})
set(CPACK_PACKAGE_CONTACT "attn-run developers <dev@attn-run>")
set(CPACK_PACKAGE_DESCRIPTION_SUMMARY
    "run self-attention layers from PyTorch weights with PyTorch's numbers")
set(CPACK_PACKAGE_DESCRIPTION
    "attn-run computes one attention layer (single-head, multi-head, causal, GPT-2) on token\n"
    "embeddings from PyTorch weights (.npy, .npz, .safetensors) and a JSON config, writes\n"
    "context vectors and attention maps as .npy, and draws the maps.")
set(CPACK_DEBIAN_FILE_NAME DEB-DEFAULT)
set(CPACK_DEBIAN_PACKAGE_SECTION science)
set(CPACK_DEBIAN_PACKAGE_PRIORITY optional)
find_program(ATTN_DPKG_SHLIBDEPS dpkg-shlibdeps)
if(ATTN_DPKG_SHLIBDEPS)
  # Depends computed from the libraries every ELF file of the package links: the
  # executable's (zlib, spdlog...) and the picture module's (cairo, fontconfig);
  # OpenBLAS named as well, as builds with their own kernels load it only when
  # --check-f64 asks for float64 products (kernels/blas.cpp), not by linking it.
  set(CPACK_DEBIAN_PACKAGE_DEPENDS "libopenblas0 | libopenblas0-pthread")
  set(CPACK_DEBIAN_PACKAGE_SHLIBDEPS ON)
else()
  set(CPACK_DEBIAN_PACKAGE_DEPENDS
      "libc6, libstdc++6, libgcc-s1, libopenblas0 | libblas3, libcairo2, libfontconfig1, zlib1g, libspdlog1.10, libfmt9")
endif()
include(CPack)

if(ATTN_BUILD_TESTS)
  # Builds the .deb, unpacks it into a temporary root and runs the program from there.
  add_test(NAME test_deb COMMAND ${PROJECT_SOURCE_DIR}/tests/package/test_deb.sh ${PROJECT_BINARY_DIR})
  set_tests_properties(test_deb PROPERTIES SKIP_RETURN_CODE 77 RUN_SERIAL TRUE)
endif()
