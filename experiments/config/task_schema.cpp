#include "experiments/config/task_schema.hpp"

#include <algorithm>

namespace relpos {

namespace {
// Constant-initialised (two function pointers): set before main by the tasks room, read after.
TaskSchemaLookup g_lookup;
}  // namespace

void install_task_schemas(TaskSchemaLookup lookup) { g_lookup = lookup; }

const TaskDataSchema* task_data_schema(const std::string& task) {
    return g_lookup.find ? g_lookup.find(task) : nullptr;
}

std::vector<std::string> task_names() { return g_lookup.names ? g_lookup.names() : std::vector<std::string>{}; }

std::vector<std::string> task_data_keys(const std::string& task) {
    return g_lookup.data_keys ? g_lookup.data_keys(task) : std::vector<std::string>{};
}

std::string default_task() { return g_lookup.default_task ? g_lookup.default_task() : std::string(); }

std::string default_data_dir() {
    const TaskDataSchema* s = task_data_schema(default_task());
    return s ? s->dir : std::string();
}

std::vector<std::string> default_test_splits(const std::string& task) {
    const TaskDataSchema* s = task_data_schema(task);
    return s ? s->test_splits : std::vector<std::string>{"test"};
}

bool every_task_reads(const std::string& key) {
    return key == "task" || key == "valid_split" || key == "test_splits";
}

bool task_names_runs_by(const std::string& task, const std::string& section) {
    const TaskDataSchema* s = task_data_schema(task);
    return s && std::find(s->named_sections.begin(), s->named_sections.end(), section) != s->named_sections.end();
}

}  // namespace relpos
