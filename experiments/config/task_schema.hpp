// What the config layer must know of a task to read, check and write a config's data section: its data
// directory, its default test splits and metrics, the data sub-sections its runs are named by. Each task
// declares it in its registry entry (experiments/tasks/task.hpp: TaskEntry::data); the tasks room
// installs the lookup (experiments/tasks/registry.cpp), so config/ reads it without naming a task or
// including a room above it.
#pragma once

#include <map>
#include <string>
#include <vector>

namespace relpos {

struct TaskDataSchema {
    // data.dir when the config gives none; "" = the task reads no files, and the default task's directory
    // is what its runs' names record (as they did before tasks declared their data).
    std::string dir;
    bool reads_dir = false;        // data.dir must be an existing directory (LoadFlags::check_paths)
    std::string missing_dir_hint;  // appended to the message when it is not, e.g. "; `make data` installs ..."
    std::vector<std::string> test_splits{"test"};  // data.test_splits when the config gives none
    // eval.metrics when the config gives none, by model.family; a family not listed gets the generic default.
    std::map<std::string, std::vector<std::string>> default_metrics;
    // Data sub-sections (data.<name>) written into the config hash for this task only: a section added
    // after runs of other tasks were finished is left out of their names. Today: "lm".
    std::vector<std::string> named_sections;
};

struct TaskSchemaLookup {
    const TaskDataSchema* (*find)(const std::string& task) = nullptr;  // nullptr: not a registered task
    std::string (*default_task)() = nullptr;                          // data.task when a config gives none
    std::vector<std::string> (*names)() = nullptr;                     // every registered task, in order
    // The data.* keys a task reads, as its registry entry lists them for `relpos list` (TaskEntry::options:
    // "dir", "lm.context", "synthetic.n_symbols", ...); read_data refuses every other data key a config sets
    // away from its default, but those every task reads (every_task_reads).
    std::vector<std::string> (*data_keys)(const std::string& task) = nullptr;
};

// Called once by the tasks room, before main (a static initializer in experiments/tasks/registry.cpp).
void install_task_schemas(TaskSchemaLookup lookup);

// The schema of a registered task, or nullptr (an unknown name; read_data refuses it at its line).
const TaskDataSchema* task_data_schema(const std::string& task);
// Every registered task's name (empty when no tasks room is linked in).
std::vector<std::string> task_names();
// The task a config without data.task trains, and its data directory.
std::string default_task();
std::string default_data_dir();
// data.test_splits when a config of `task` gives none.
std::vector<std::string> default_test_splits(const std::string& task);
// The data.* keys `task` reads (TaskSchemaLookup::data_keys); empty when no tasks room is linked in.
std::vector<std::string> task_data_keys(const std::string& task);
// The data keys every task reads, listed in no registry entry: task, valid_split, test_splits.
bool every_task_reads(const std::string& key);
// Whether data.<section> names the runs of `task` (TaskDataSchema::named_sections).
bool task_names_runs_by(const std::string& task, const std::string& section);

}  // namespace relpos
