package agentspec_test

import (
	"fmt"

	"github.com/weft-run/weft/agentspec"
)

func ExampleParse() {
	spec := `version: 1
agents:
  - name: local
    model:
      name: openai-compatible:llama3.1
      base_url: http://127.0.0.1:11434/v1
    instructions: [You answer briefly.]
    limits: {requests: 5}
`
	f, err := agentspec.Parse("agents.yaml", []byte(spec))
	if err != nil {
		fmt.Println(err)
		return
	}
	a := f.Agents[0]
	fmt.Println(a.Name, a.Model.Name, *a.Limits.Requests)

	_, err = agentspec.Parse("agents.yaml", []byte(spec+"    temprature: 0.2\n"))
	fmt.Println(err)
	// Output:
	// local openai-compatible:llama3.1 5
	// agents.yaml:9: agents[0].temprature: unknown field (known: name, description, model, instructions, settings, limits, toolsets, approval_required, trusted_tools, tool_timeout, tool_retries, agent_tools)
}
