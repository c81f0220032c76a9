// The AI SDK adapter with AI SDK 6 (installed as "ai6"): rein decides
// through each tool's needsApproval.
import * as ai from "ai6";
import { MockLanguageModelV3 } from "ai6/test";
import { aiSdkSuite } from "./ai-sdk-suite.js";

aiSdkSuite("AI SDK 6, needsApproval", { ai, MockLanguageModelV3, mode: "needsApproval" });
