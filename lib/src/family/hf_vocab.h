// Private to config.cpp: Hugging Face's and torch's names for config keys.
#pragma once

#include <string>

namespace attn {

// For an unknown key of the object at `path` ("" = top level): the message
// that replaces the spelling suggestion, or "" when the key is no known
// foreign name.
std::string foreign_config_key(const std::string& path, const std::string& key);

}  // namespace attn
