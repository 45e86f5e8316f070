#include "core/trigger.h"

#include <gtest/gtest.h>

namespace muster::core {
namespace {

Trigger Drained() {
  Trigger t;
  t.id = 2;
  t.resource = TriggerResource::kNode;
  t.resource_id = "gpu02";
  t.type = "drained";
  t.user = "root";
  t.perm = true;
  t.program = "/tmp/trig.sh";
  return t;
}

TEST(TriggerTest, JsonRoundTripsAndRefusesWhatMusterDoesNotFire) {
  const util::Result<Trigger> back = TriggerFromJson(ToJson(Drained()));
  ASSERT_TRUE(back.ok());
  EXPECT_EQ(back->resource_id, "gpu02");
  EXPECT_TRUE(back->perm);
  nlohmann::json bad = ToJson(Drained());
  bad["type"] = "fini";  // a node cannot end
  EXPECT_FALSE(TriggerFromJson(bad).ok());
  bad["resource"] = "moon";
  EXPECT_FALSE(TriggerFromJson(bad).ok());
  EXPECT_TRUE(TriggerTypeValid(TriggerResource::kJob, "time"));
  EXPECT_FALSE(TriggerTypeValid(TriggerResource::kNode, "idle"));
  EXPECT_TRUE(
      TriggerTypeValid(TriggerResource::kController, "primary_slurmctld_resumed_operation"));
}

TEST(TriggerTest, ProgramGetsItsArgumentsThenTheResource) {
  Trigger t = Drained();
  t.program = "/tmp/trig.sh extra more";
  EXPECT_EQ(TriggerCommand(t, "gpu[01-02]"),
            (std::vector<std::string>{"/tmp/trig.sh", "extra", "more", "gpu[01-02]"}));
  EXPECT_EQ(TriggerCommand(t, ""), (std::vector<std::string>{"/tmp/trig.sh", "extra", "more"}));
}

TEST(TriggerTest, TableIsStriggers) {
  // From the oracle's strigger --get.
  Trigger down = Drained();
  down.id = 1;
  down.resource_id = "*";
  down.type = "down";
  down.perm = false;
  EXPECT_EQ(RenderTriggers({down, Drained()}, false),
            "TRIG_ID RES_TYPE   RES_ID TYPE                                OFFSET USER     FLAGS "
            "PROGRAM\n"
            "      1 node            * down                                     0 root           "
            "/tmp/trig.sh\n"
            "      2 node        gpu02 drained                                  0 root     PERM  "
            "/tmp/trig.sh\n");
  EXPECT_EQ(RenderTriggers({}, false), "");
  EXPECT_EQ(RenderTriggers({down}, true).find("TRIG_ID"), std::string::npos);
}

}  // namespace
}  // namespace muster::core
