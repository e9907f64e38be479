# Helpers shared by the subsystems' CMakeLists.

# tforge_add_plugin(NAME SOURCES...): a dlopen module `tforge-NAME.so` in the plugin folder (built
# and installed), plus an object library NAME_static whose entry is renamed to
# tforge_static_NAME, for programs that register plugins statically (tests).
function(tforge_add_plugin name)
  add_library(tforge-${name} MODULE ${ARGN})
  set_target_properties(tforge-${name} PROPERTIES PREFIX ""
                        LIBRARY_OUTPUT_DIRECTORY "${TFORGE_PLUGIN_BUILD_DIR}")
  target_include_directories(tforge-${name} PRIVATE ${PROJECT_SOURCE_DIR}/include)
  target_link_libraries(tforge-${name} PRIVATE m)
  install(TARGETS tforge-${name} LIBRARY DESTINATION ${TFORGE_PLUGIN_INSTALL_DIR})
  add_library(${name}_static OBJECT ${ARGN})
  target_include_directories(${name}_static PUBLIC ${PROJECT_SOURCE_DIR}/include)
  target_compile_definitions(${name}_static PRIVATE TFORGE_PLUGIN_ENTRY_NAME=tforge_static_${name})
endfunction()
