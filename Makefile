# Quarry build. `make` = release build; `make test` = deps + every test,
# optimised and under ASan+UBSan; `make tsan-stress` = the search stress
# test under ThreadSanitizer for 20 s (by hand); `make demo`; `make bench`.
# See README.md.

CC      ?= cc
CSTD    := -std=gnu11
WARN    := -Wall -Wextra -Werror -Wshadow -Wstrict-prototypes -Wno-unused-parameter
DEPS_LIBS := -lpg_query -lprotobuf-c -lmicrohttpd -lz -lzstd -lxxhash -lunistring -lssl -lcrypto -lpthread -lm
INC     := -Isrc -Ibuild/gen
# the tests' independent oracle for GROUP BY answers; libpq for the server's client tests
TEST_LIBS := -lsqlite3 -lpq
TEST_INC  := $(shell pkg-config --cflags libpq 2>/dev/null || echo -I/usr/include/postgresql)

REL_CFLAGS  := $(CSTD) $(WARN) -O2 -g -D_GNU_SOURCE $(INC)
ASAN_CFLAGS := $(CSTD) $(WARN) -O1 -g -fno-omit-frame-pointer -fsanitize=address,undefined \
               -fno-sanitize-recover=undefined -D_GNU_SOURCE $(INC)
TSAN_CFLAGS := $(CSTD) $(WARN) -O1 -g -fno-omit-frame-pointer -fsanitize=thread -D_GNU_SOURCE $(INC)

# C generated at build time: the OTLP messages (src/http/otlp_logs.proto) by protoc-c
GEN_C    := build/gen/http/otlp_logs.pb-c.c
GEN_H    := build/gen/http/otlp_logs.pb-c.h
LIB_SRC  := $(sort $(filter-out src/cli/%,$(wildcard src/*/*.c))) $(GEN_C)
CLI_SRC  := $(sort $(wildcard src/cli/*.c))
TEST_SRC := $(sort $(wildcard tests/*/test_*.c))

define objs
$(patsubst build/gen/%.c,build/$(1)/obj/_gen/%.o,$(patsubst src/%.c,build/$(1)/obj/%.o,$(2)))
endef

REL_LIB   := build/rel/libquarry.a
ASAN_LIB  := build/asan/libquarry.a
REL_BIN   := build/rel/quarry
ASAN_BIN  := build/asan/quarry
REL_TESTS := $(patsubst tests/%.c,build/rel/tests/%,$(TEST_SRC))
ASAN_TESTS:= $(patsubst tests/%.c,build/asan/tests/%,$(TEST_SRC))

.PHONY: all deps test unit-rel unit-asan e2e fuzz demo bench bench-grid bench-10m clean check-layers clang-build format \
        tsan-stress
all: $(REL_BIN)
	@ln -sf $(REL_BIN) quarry

deps:
	@bash scripts/install-deps

# ---- generated ----
$(GEN_C) $(GEN_H) &: src/http/otlp_logs.proto
	@mkdir -p build/gen/http
	protoc-c --c_out=build/gen/http --proto_path=src/http $<
# everything that may include the generated header waits for it
$(foreach b,rel asan tsan,$(call objs,$(b),$(LIB_SRC) $(CLI_SRC))): $(GEN_H)

# ---- release ----
build/rel/obj/_gen/%.o: build/gen/%.c
	@mkdir -p $(dir $@)
	$(CC) $(REL_CFLAGS) -c $< -o $@
build/rel/obj/%.o: src/%.c
	@mkdir -p $(dir $@)
	$(CC) $(REL_CFLAGS) -MMD -MP -c $< -o $@
$(REL_LIB): $(call objs,rel,$(LIB_SRC))
	@rm -f $@; ar rcs $@ $^
$(REL_BIN): $(call objs,rel,$(CLI_SRC)) $(REL_LIB)
	$(CC) $(REL_CFLAGS) -o $@ $^ $(DEPS_LIBS)
build/rel/tests/%: tests/%.c $(REL_LIB)
	@mkdir -p $(dir $@)
	$(CC) $(REL_CFLAGS) -MMD -MP -Itests $(TEST_INC) -o $@ $< $(REL_LIB) -lcmocka $(DEPS_LIBS) $(TEST_LIBS)
# micro-benchmarks (not part of make test), e.g. build/rel/bench/bitpack
build/rel/bench/%: bench/%.c $(REL_LIB)
	@mkdir -p $(dir $@)
	$(CC) $(REL_CFLAGS) -o $@ $< $(REL_LIB) $(DEPS_LIBS)

# ---- ASan + UBSan ----
build/asan/obj/_gen/%.o: build/gen/%.c
	@mkdir -p $(dir $@)
	$(CC) $(ASAN_CFLAGS) -c $< -o $@
build/asan/obj/%.o: src/%.c
	@mkdir -p $(dir $@)
	$(CC) $(ASAN_CFLAGS) -MMD -MP -c $< -o $@
$(ASAN_LIB): $(call objs,asan,$(LIB_SRC))
	@rm -f $@; ar rcs $@ $^
$(ASAN_BIN): $(call objs,asan,$(CLI_SRC)) $(ASAN_LIB)
	$(CC) $(ASAN_CFLAGS) -o $@ $^ $(DEPS_LIBS)
build/asan/tests/%: tests/%.c $(ASAN_LIB)
	@mkdir -p $(dir $@)
	$(CC) $(ASAN_CFLAGS) -MMD -MP -Itests $(TEST_INC) -o $@ $< $(ASAN_LIB) -lcmocka $(DEPS_LIBS) $(TEST_LIBS)

# ---- ThreadSanitizer (make tsan-stress; not part of make test) ----
TSAN_LIB := build/tsan/libquarry.a
build/tsan/obj/_gen/%.o: build/gen/%.c
	@mkdir -p $(dir $@)
	$(CC) $(TSAN_CFLAGS) -c $< -o $@
build/tsan/obj/%.o: src/%.c
	@mkdir -p $(dir $@)
	$(CC) $(TSAN_CFLAGS) -MMD -MP -c $< -o $@
$(TSAN_LIB): $(call objs,tsan,$(LIB_SRC))
	@rm -f $@; ar rcs $@ $^
build/tsan/tests/%: tests/%.c $(TSAN_LIB)
	@mkdir -p $(dir $@)
	$(CC) $(TSAN_CFLAGS) -MMD -MP -Itests $(TEST_INC) -o $@ $< $(TSAN_LIB) -lcmocka $(DEPS_LIBS) $(TEST_LIBS)

-include $(shell find build -name '*.d' 2>/dev/null)

# ---- tests ----
export ASAN_OPTIONS := detect_leaks=1:abort_on_error=1:strict_string_checks=1
export UBSAN_OPTIONS := print_stacktrace=1:halt_on_error=1

unit-rel: $(REL_TESTS)
	@bash scripts/run-units build/rel $(REL_TESTS)
unit-asan: $(ASAN_TESTS)
	@bash scripts/run-units build/asan $(ASAN_TESTS)

e2e: $(REL_BIN) $(ASAN_BIN)
	@QUARRY=$(REL_BIN) bash tests/e2e/run.sh
	@QUARRY=$(ASAN_BIN) QUARRY_SMALL=1 bash tests/e2e/run.sh
	@QUARRY=$(REL_BIN) bash tests/e2e/server.sh
	@QUARRY=$(ASAN_BIN) QUARRY_SMALL=1 bash tests/e2e/server.sh
	@QUARRY=$(REL_BIN) bash tests/e2e/grid.sh
	@QUARRY=$(ASAN_BIN) bash tests/e2e/grid.sh
	@QUARRY=$(REL_BIN) bash tests/e2e/http.sh
	@QUARRY=$(ASAN_BIN) bash tests/e2e/http.sh
	@/usr/bin/python3 tests/e2e/crash.py $(REL_BIN) $${QUARRY_CRASH_ROUNDS:-50} 1
	@/usr/bin/python3 tests/e2e/crash.py $(ASAN_BIN) 10 2

fuzz: $(GEN_C)
	@bash fuzz/run.sh 20

# 8 clients over one table for QUARRY_STRESS_SECONDS (20 by default here);
# any report of a race fails it (TSan exits 66).
tsan-stress: deps
	@$(MAKE) --no-print-directory -j2 build/tsan/tests/search/test_par_stress
	TSAN_OPTIONS="halt_on_error=0 second_deadlock_stack=1 history_size=4 $$TSAN_OPTIONS" \
	    QUARRY_STRESS_SECONDS=$${QUARRY_STRESS_SECONDS:-20} build/tsan/tests/search/test_par_stress

check-layers:
	@bash scripts/check-layers

clang-build:
	@$(MAKE) --no-print-directory -s CC=clang BUILDTAG=clang build/clang/ok

build/clang/ok: $(LIB_SRC) $(CLI_SRC) $(TEST_SRC) $(wildcard fuzz/fuzz_*.c bench/*.c) $(GEN_H)
	@mkdir -p build/clang
	clang $(CSTD) $(WARN) -O2 -D_GNU_SOURCE $(INC) -o build/clang/quarry $(LIB_SRC) $(CLI_SRC) $(DEPS_LIBS)
	@for f in $(TEST_SRC) $(wildcard fuzz/fuzz_*.c bench/*.c); do \
	    clang $(CSTD) $(WARN) -D_GNU_SOURCE $(INC) -Itests $(TEST_INC) -fsyntax-only $$f || exit 1; done
	@touch $@

test: deps
	@rm -rf build/results
	@$(MAKE) --no-print-directory check-layers
	@$(MAKE) --no-print-directory -j2 all $(ASAN_BIN) $(REL_TESTS) $(ASAN_TESTS)
	@$(MAKE) --no-print-directory clang-build
	@$(MAKE) --no-print-directory unit-rel unit-asan e2e fuzz
	@bash scripts/summary

demo: deps
	@$(MAKE) --no-print-directory -j2 all
	@bash scripts/demo

bench: deps
	@$(MAKE) --no-print-directory -j2 all
	@bash bench/ingest.sh
	@bash bench/search.sh
	@bash bench/topk.sh
	@/usr/bin/python3 bench/grid/grid.py --rows 1000000

# the query grid alone: 85 queries, Quarry and its peers (bench/grid/REVIEW.md)
bench-grid: deps
	@$(MAKE) --no-print-directory -j2 all
	@/usr/bin/python3 bench/grid/grid.py --rows 1000000

# the headline: the grid at 10M rows (no brute-force oracle: engines cross-checked)
bench-10m: deps
	@$(MAKE) --no-print-directory -j2 all
	@/usr/bin/python3 bench/grid/grid.py --rows 10000000

format:
	clang-format -i $(filter-out $(GEN_C),$(LIB_SRC)) $(CLI_SRC) $(TEST_SRC)

clean:
	rm -rf build quarry
